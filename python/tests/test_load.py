"""Tests of dcsim_results against real dcsim output.

DCSIM_RESULTS names an experiment directory written by `dcsim run` (CI runs the default
experiment's smoke version and the GPMP load smoke run); without it the tests run dcsim
themselves, with the binary DCSIM_BIN names or through `cargo run --release`.
"""

import math
import os
import subprocess
import tempfile
import unittest

import dcsim_results as dr

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_dcsim(args, out):
    # DCSIM_BIN names a built dcsim binary to use; without it, cargo builds (or reuses) the
    # release binary of this checkout.
    exe = os.environ.get("DCSIM_BIN")
    cmd = [exe] if exe else ["cargo", "run", "--release", "--quiet", "--"]
    subprocess.run(
        [*cmd, "run", *args, "--quiet", "--output-dir", out],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )


class LoadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        out = cls.tmp.name
        run_dcsim(["--smoke"], out)
        run_dcsim(["experiments/gpmp/load.toml", "--smoke"], out)
        cls.default = dr.load(os.path.join(out, "default-smoke"))
        cls.sweep = dr.load(os.path.join(out, "gpmp-load-smoke"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_tables(self):
        e = self.default
        self.assertEqual(sorted(e.runs["scheme"].unique()), ["DCTCP", "TCP"])
        self.assertEqual(set(e.flows["run"]), {"TCP-s1", "DCTCP-s1"})
        for col in ("flow_id", "fct_ps", "slowdown", "scheme", "seed"):
            self.assertIn(col, e.flows.columns)
        self.assertFalse(e.ports.empty)
        self.assertFalse(e.switches.empty)
        self.assertEqual(e.manifest["config"]["name"], "default-smoke")
        self.assertTrue(e.timeseries("queues").empty)

    def test_percentiles_match_the_summary(self):
        # dcsim's p99 slowdown of each run, recomputed from its flows.
        e = self.default
        for run, flows in e.flows.groupby("run"):
            row = e.runs[(e.runs["run"] == run) & (e.runs["class"] == "all")].iloc[0]
            p99 = dr.percentile(flows["slowdown"].dropna(), 99)
            self.assertAlmostEqual(p99, row["p99_slowdown"], places=5)
            avg = flows["fct_ps"].dropna().mean() / 1e6
            self.assertAlmostEqual(avg, row["avg_fct_us"], places=3)

    def test_numpy_inverted_cdf_is_the_same_percentile(self):
        try:
            import numpy as np
        except ImportError:  # pragma: no cover
            self.skipTest("numpy missing")
        x = self.default.flows["slowdown"].dropna().to_numpy()
        for p in (50, 90, 99, 99.9):
            self.assertEqual(np.percentile(x, p, method="inverted_cdf"), dr.percentile(x, p))
        self.assertTrue(math.isnan(dr.percentile([], 50)))

    def test_sweep_columns_follow_each_run(self):
        s = self.sweep
        self.assertIn("load", s.flows.columns)
        self.assertEqual(sorted(s.flows["load"].unique()), [0.3, 0.8])
        # The paper figure's table: short-message p99 FCT per scheme and load.
        short = s.runs[s.runs["class"] == "<50KB"]
        fig = short.pivot_table(index="load", columns="scheme", values="p99_fct_us")
        self.assertEqual(list(fig.index), [0.3, 0.8])
        self.assertIn("GPMP", fig.columns)

    def test_errors(self):
        with self.assertRaises(FileNotFoundError):
            dr.load(os.path.join(self.tmp.name, "nothing-here"))


if __name__ == "__main__":
    unittest.main()
