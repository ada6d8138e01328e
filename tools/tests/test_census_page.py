#!/usr/bin/python3
"""tools/nightly.d/census.py: a build's census JSON attached to its entry
(None without one) and rendered as a table of marks, names escaped.

    test_census_page.py SRC_DIR
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(sys.argv[1], "tools", "nightly.d"))
import census  # noqa: E402

CENSUS = {"machine": {"cpu": "Some <CPU>", "isa": "AVX2", "cores": 2}, "threads": [1, 2, 3],
          "repeat": 2,
          "libraries": [{"library": "oneDNN convolution", "version": "oneDNN 2.6.3",
                         "rows": [{"row": "conv2.plain.bwd_weights.dW", "op": "onednn_bwd_weights",
                                   "cells": {"1": "=", "2": "R", "3": "N"},
                                   "worst_bound_ratio": 2.46e-05, "max_ulp": 32768,
                                   "impl": "x64:gemm:jit"}]}]}

with tempfile.TemporaryDirectory() as sweeps:
    with open(os.path.join(sweeps, "gcc-O3-native.census.json"), "w") as f:
        json.dump(CENSUS, f)
    builds = census.attach([{"name": "gcc-O3-native"}, {"name": "clang-O0-native"}], sweeps)
assert builds[0]["census"] == CENSUS, builds[0]
assert builds[1]["census"] is None, builds[1]
page = census.html(builds)
for want in ("<h3>gcc-O3-native</h3>", "Some &lt;CPU&gt; (AVX2, 2 cores)", "oneDNN 2.6.3",
             "<code>conv2.plain.bwd_weights.dW</code> (x64:gemm:jit)",
             "color:white;text-align:center\">R</td>", "text-align:center\">N</td>",
             "<td>2.46e-05</td><td>32768</td>"):
    assert want in page, (want, page)
assert "clang-O0-native" not in page
assert "No build has a census" in census.html([{"name": "x", "census": None}])
print("ok")
