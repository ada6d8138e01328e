"""Reading samebits case files (harness/FORMATS.md) from Python, for the
tools that run a case in PyTorch next to samebits."""
import configparser


class CaseError(Exception):
    """A case file a tool cannot read."""


def read(path):
    """The case file's sections and keys (a ConfigParser)."""
    cp = configparser.ConfigParser(inline_comment_prefixes=("#", ";"))
    try:
        with open(path) as f:
            cp.read_file(f)
    except (OSError, configparser.Error) as e:
        raise CaseError(f"{path}: {e}") from e
    return cp


def sample_range(path, text, key):
    """[train] key = A..B (samples or characters) as (A, B)"""
    lo, sep, hi = text.partition("..")
    if not sep or not lo.isdigit() or not hi.isdigit() or int(lo) >= int(hi):
        raise CaseError(f"{path}: [train] {key}: expected a range A..B, found {text!r}")
    return int(lo), int(hi)
