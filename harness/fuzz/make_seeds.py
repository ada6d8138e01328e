#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, from the repository's real files.

usage: make_seeds.py SAMEBITS OUT_DIR   (from the repository root)

OUT_DIR/<target>/ gets: the case files (fuzz_casefile); the goldens
(fuzz_trace); the trace streams of a kernel run and two training steps
(fuzz_trace_stream); the .npy dumps of a kernel run (fuzz_npy); the first samples
of the MNIST IDX files, whole and gzipped, as the IDX targets' inputs (a
split byte, then the images file, then the labels file; fuzz_idx.c); and the
JSON report of a small sweep (fuzz_report).
"""
import glob
import gzip
import os
import shutil
import struct
import subprocess
import sys
import tempfile


def main():
    exe, out = sys.argv[1], sys.argv[2]
    for t in ('fuzz_casefile', 'fuzz_trace', 'fuzz_trace_stream', 'fuzz_npy', 'fuzz_idx',
              'fuzz_idx_gzip', 'fuzz_report'):
        os.makedirs(os.path.join(out, t), exist_ok=True)
    for p in glob.glob('cases/*.case'):
        shutil.copy(p, os.path.join(out, 'fuzz_casefile'))
    for p in glob.glob('golden/kernel_*.golden') + ['golden/keras_mnist_cnn_short.golden']:
        shutil.copy(p, os.path.join(out, 'fuzz_trace'))
    work = tempfile.mkdtemp(prefix='samebits.seeds.')
    try:
        dumps = os.path.join(work, 'dumps')
        for case in ('kernel_dense_fwd_det', 'kernel_xent_loss_loose'):
            os.makedirs(dumps, exist_ok=True)
            subprocess.run([exe, 'run', 'cases/%s.case' % case, '--threads', '1',
                            '--trace', os.path.join(work, 't'), '--dump-all', '--dump-step', '0',
                            '--dump-dir', dumps], check=True, stdout=subprocess.DEVNULL)
        # the streams of a kernel run and of two training steps
        for case, extra in (('kernel_dense_fwd_det', []),
                            ('keras_mnist_cnn_short', ['--max-steps', '2'])):
            subprocess.run([exe, 'run', 'cases/%s.case' % case, '--threads', '1',
                            '--trace', os.path.join(work, 't'), '--stream',
                            os.path.join(out, 'fuzz_trace_stream', case + '.stream')] + extra,
                           check=True, stdout=subprocess.DEVNULL)
        for p in glob.glob(os.path.join(dumps, '*.npy')):
            if os.path.getsize(p) <= 1 << 16:
                shutil.copy(p, os.path.join(out, 'fuzz_npy'))
        subprocess.run([exe, 'sweep', 'cases/kernel_xent_loss_loose.case', 'cases/kernel_dropout_mask_det.case',
                        '--threads', '1,2', '--json', os.path.join(out, 'fuzz_report', 'sweep.json'),
                        '--work-dir', os.path.join(work, 'sweep')], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open('data/mnist-images-idx3-ubyte', 'rb') as f:
        images = f.read(16 + 4 * 28 * 28)
    with open('data/mnist-labels-idx1-ubyte', 'rb') as f:
        labels = f.read(8 + 4)
    # 4 samples: the counts in both headers say so
    images = images[:4] + struct.pack('>I', 4) + images[8:]
    labels = labels[:4] + struct.pack('>I', 4) + labels[8:]
    for name, im, lb in (('mnist4', images, labels),
                         ('mnist4_gz', gzip.compress(images), gzip.compress(labels))):
        split = round(255 * len(im) / (len(im) + len(lb)))
        # the split byte must land exactly between the two files
        while (len(im) + len(lb)) * split // 255 < len(im):
            split += 1
        while (len(im) + len(lb)) * split // 255 > len(im):
            split -= 1
        seed = bytes([split]) + im + lb
        for t in ('fuzz_idx', 'fuzz_idx_gzip') if name == 'mnist4' else ('fuzz_idx',):
            with open(os.path.join(out, t, name), 'wb') as f:
                f.write(seed)


if __name__ == '__main__':
    main()
