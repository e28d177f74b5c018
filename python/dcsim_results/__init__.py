"""Load dcsim experiment results into pandas DataFrames.

An experiment directory (``<output_dir>/<name>``) holds ``summary.csv`` (one row per run and
size class), ``manifest.json``, and one directory per complete run with ``fct.csv``
(per flow), ``ports.csv``, ``switches.csv``, ``manifest.json`` and, when sampled,
``ts_*.csv`` time series. :func:`load` reads them; per-run tables get the run's id, scheme,
seed and sweep values as columns so that they can be grouped like ``summary.csv``.

Percentiles: dcsim reports nearest-rank percentiles (the smallest value with at least p % of
the values at or below it). :func:`percentile` computes the same; with numpy it is
``numpy.percentile(x, p, method="inverted_cdf")``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Iterable

import pandas as pd

__all__ = ["Experiment", "load", "percentile"]
__version__ = "0.1.0"


def percentile(values: Iterable[float], p: float) -> float:
    """dcsim's nearest-rank percentile of ``values`` (``p`` in [0, 100]); NaN when empty."""
    v = sorted(float(x) for x in values if not (isinstance(x, float) and math.isnan(x)))
    if not v:
        return float("nan")
    if not 0 <= p <= 100:
        raise ValueError(f"p must be in [0, 100], got {p}")
    rank = max(1, math.ceil(p / 100 * len(v)))
    return v[min(rank, len(v)) - 1]


@dataclass
class Experiment:
    """One experiment's results."""

    path: str
    manifest: dict
    runs: pd.DataFrame
    flows: pd.DataFrame
    ports: pd.DataFrame
    switches: pd.DataFrame
    run_info: pd.DataFrame = field(repr=False)

    def timeseries(self, kind: str) -> pd.DataFrame:
        """Every run's ``ts_<kind>.csv`` (``queues``, ``links``, ``flows``, ...), with the run
        columns; empty when no run sampled it."""
        return _per_run(self.path, self.run_info, f"ts_{kind}.csv")


def _run_info(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per run: the summary's columns before ``class`` (run id, scheme, seed and the
    sweep axes' values)."""
    cols = list(summary.columns)
    upto = cols.index("class") if "class" in cols else 3
    return summary[cols[:upto]].drop_duplicates("run").reset_index(drop=True)


def _per_run(path: str, info: pd.DataFrame, name: str) -> pd.DataFrame:
    frames = []
    for _, r in info.iterrows():
        f = os.path.join(path, str(r["run"]), name)
        if not os.path.isfile(f):
            continue
        df = pd.read_csv(f)
        for i, (col, val) in enumerate(r.items()):
            if col not in df.columns:
                df.insert(i, col, val)
        frames.append(df)
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def load(path: str) -> Experiment:
    """Reads the experiment directory ``path`` (``<output_dir>/<name>``)."""
    if not os.path.isdir(path):
        raise FileNotFoundError(f"{path}: not an experiment directory")
    summary = os.path.join(path, "summary.csv")
    if not os.path.isfile(summary):
        raise FileNotFoundError(f"{summary}: missing (is the experiment complete?)")
    with open(os.path.join(path, "manifest.json")) as f:
        manifest = json.load(f)
    runs = pd.read_csv(summary)
    info = _run_info(runs)
    return Experiment(
        path=path,
        manifest=manifest,
        runs=runs,
        flows=_per_run(path, info, "fct.csv"),
        ports=_per_run(path, info, "ports.csv"),
        switches=_per_run(path, info, "switches.csv"),
        run_info=info,
    )
