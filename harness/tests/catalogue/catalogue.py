#!/usr/bin/env python3
"""The malformed-input catalogue (catalogue.tsv): every input must give its
exit status (2 unless the row says) and exactly one printable line on
stderr that names the file and, where it has one, the position; no sanitizer report, no allocation beyond
what the file could justify (an address-space limit, or under ASan an
allocation cap, makes a larger one fail, which changes the message), and
every golden file unchanged.

usage: catalogue.py SAMEBITS [--sanitized]   (run from the repository root)
"""
import hashlib
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.relpath(os.path.join(HERE, 'inputs'))
# 512 MiB of address space: the runs here need far less; an allocation of
# what an input merely declares (up to 16 GiB) fails.
ADDRESS_LIMIT = 512 << 20
PROBE = 'dense1.fwd.out'


def golden_sums():
    sums = {}
    for top in ('golden', INPUTS):
        for dirpath, _, files in os.walk(top):
            for f in files:
                p = os.path.join(dirpath, f)
                with open(p, 'rb') as fh:
                    sums[p] = hashlib.sha256(fh.read()).hexdigest()
    return sums


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))


def main():
    exe = sys.argv[1]
    sanitized = '--sanitized' in sys.argv[2:]
    env = dict(os.environ)
    if sanitized:
        # ASan reserves terabytes of address space, so the cap is its own
        env['ASAN_OPTIONS'] = env.get('ASAN_OPTIONS', '') + \
            ':allocator_may_return_null=1:max_allocation_size_mb=512'
    before = golden_sums()
    work = tempfile.mkdtemp(prefix='samebits.catalogue.')
    # two traces of one case that diverge at PROBE, for the .npy rows
    a, b = os.path.join(work, 'a.trace'), os.path.join(work, 'b.trace')
    for threads, path in (('1', a), ('4', b)):
        subprocess.run([exe, 'run', 'cases/mutant_dense_fwd_split_k.case', '--threads', threads,
                        '--max-steps', '1', '--trace', path], check=True, env=env)

    def npy_dir(name):
        d = os.path.join(work, 'npy.' + name)
        if not os.path.isdir(d):
            os.mkdir(d)
            shutil.copy(os.path.join(INPUTS, 'npy', name + '.npy'), os.path.join(d, PROBE + '.npy'))
        return d

    def made(s, tmp, key, make):
        """{fifo:REL,...} and {mkdir:REL,...}: FIFOs or directories made at
        tmp/REL, the first one's path in their place."""
        while '{%s:' % key in s:
            i = s.index('{%s:' % key)
            j = s.index('}', i)
            paths = [os.path.join(tmp, rel) for rel in s[i + len(key) + 2:j].split(',')]
            for path in paths:
                if not os.path.exists(path):
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    make(path)
            s = s[:i] + paths[0] + s[j + 1:]
        return s

    def expand(s, tmp):
        s = s.replace('{in}', INPUTS).replace('{tmp}', tmp).replace('{a}', a).replace('{b}', b)
        s = made(made(s, tmp, 'fifo', os.mkfifo), tmp, 'mkdir', os.mkdir)
        while '{npy:' in s:
            i = s.index('{npy:')
            j = s.index('}', i)
            s = s[:i] + npy_dir(s[i + 5:j]) + s[j + 1:]
        return s

    failures = []
    n = 0
    with open(os.path.join(HERE, 'catalogue.tsv')) as table:
        for lineno, line in enumerate(table, 1):
            if line.startswith('#') or not line.strip():
                continue
            n += 1
            fields = line.rstrip('\n').split('\t')
            name, position, args = fields[:3]
            status = int(fields[3]) if len(fields) > 3 else 2
            tmp = tempfile.mkdtemp(dir=work)
            npy = name.startswith('{npy:')
            name = expand(name, tmp)
            if npy:
                name = os.path.join(name, PROBE + '.npy')
            argv = [exe] + [expand(x, tmp) for x in shlex.split(args)]
            p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                               preexec_fn=None if sanitized else limit_memory, timeout=120)
            err = p.stderr
            lines = err.split(b'\n')
            what = []
            if p.returncode != status:
                what.append('exit status %d, expected %d' % (p.returncode, status))
            if len(lines) != 2 or lines[1] != b'':
                what.append('%d lines on stderr, expected one' % err.count(b'\n'))
            if any(c < 0x20 or c >= 0x7f for c in err.rstrip(b'\n')):
                what.append('a byte outside printable ASCII on stderr')
            text = err.decode('latin-1')
            if name not in text:
                what.append('does not name %s' % name)
            if position and position not in text:
                what.append('does not name the position %r' % position)
            if b'Sanitizer' in err or b'runtime error' in err:
                what.append('a sanitizer report')
            print('%s %d - catalogue.tsv:%d: %s' % ('not ok' if what else 'ok', n, lineno, args))
            if what:
                print('#   ' + '; '.join(what))
                print('#   stderr: %r' % err[:600])
                failures.append(lineno)
    after = golden_sums()
    n += 1
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    print('%s %d - every golden and input unchanged' % ('not ok' if changed else 'ok', n))
    for p in changed:
        print('#   changed: ' + p)
    print('1..%d' % n)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failures or changed else 0


if __name__ == '__main__':
    sys.exit(main())
