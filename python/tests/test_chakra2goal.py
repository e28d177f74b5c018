"""Tests of python/chakra2goal.py on small Chakra traces made here with the format's own
package (mlc-chakra), converted and run through dcsim.

CI installs mlc-chakra; elsewhere, without it, these tests are skipped (and fail under CI=1).
dcsim runs as in test_load.py (DCSIM_BIN, or `cargo run --release`).
"""

import csv
import importlib.util
import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

spec = importlib.util.spec_from_file_location(
    "chakra2goal", os.path.join(ROOT, "python", "chakra2goal.py")
)
c2g = importlib.util.module_from_spec(spec)
spec.loader.exec_module(c2g)

try:
    from chakra.schema.protobuf import et_def_pb2 as pb
    from chakra.src.third_party.utils.protolib import encodeMessage

    HAVE_CHAKRA = True
except ImportError:
    HAVE_CHAKRA = False


def node(i, ty, name="", deps=(), dur_us=0, **at):
    n = pb.Node(id=i, name=name or f"n{i}", type=ty, duration_micros=dur_us)
    n.data_deps.extend(deps)
    for k, v in at.items():
        if isinstance(v, str):
            n.attr.append(pb.AttributeProto(name=k, string_val=v))
        else:
            n.attr.append(pb.AttributeProto(name=k, int64_val=v))
    return n


def write_trace(d, name, ranks):
    """ranks: per rank, its list of nodes."""
    for r, nodes in enumerate(ranks):
        with open(os.path.join(d, f"{name}.{r}.et"), "wb") as f:
            encodeMessage(f, pb.GlobalMetadata(version="0.0.4"))
            for n in nodes:
                encodeMessage(f, n)
    return os.path.join(d, name)


def run_dcsim(workload, hosts, out):
    """Runs `workload` (the body of a `[workload]` table) on one switch of `hosts` 100 Gbps
    hosts under SP-RDMA, writing to `out`; returns the run's directory."""
    os.makedirs(out, exist_ok=True)
    cfg = os.path.join(out, "run.toml")
    with open(cfg, "w") as f:
        f.write(
            'name = "chakra"\nschemes = ["SP-RDMA"]\n[topology]\nkind = "leaf_spine"\n'
            f"hosts_per_leaf = {hosts}\nleaves = 1\nspines = 1\n"
            'host_rate = "100Gbps"\nlink_delay = "1us"\n'
            f"[workload]\n{workload}"
        )
    exe = os.environ.get("DCSIM_BIN")
    cmd = [exe] if exe else ["cargo", "run", "--release", "--quiet", "--"]
    subprocess.run(
        [*cmd, "run", cfg, "--quiet", "--output-dir", out],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return os.path.join(out, "chakra", "SP-RDMA-s1")


def run_goal(goal, hosts, out):
    """Runs the GOAL schedule `goal`; returns fct.csv's rows and the run's directory."""
    run = run_dcsim(f'kind = "goal"\nfile = "{goal}"\n', hosts, out)
    with open(os.path.join(run, "fct.csv")) as f:
        return list(csv.DictReader(f)), run


@unittest.skipUnless(HAVE_CHAKRA or os.environ.get("CI"), "mlc-chakra is not installed")
class ChakraTest(unittest.TestCase):
    def setUp(self):
        if not HAVE_CHAKRA:
            self.fail("CI needs mlc-chakra: pip install mlc-chakra")
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def convert(self, prefix, *extra):
        goal = os.path.join(self.d, "out.goal")
        rc = c2g.main([prefix, "-o", goal, *extra])
        self.assertEqual(rc, 0)
        return goal

    def refused(self, prefix, *extra):
        with self.assertRaises(c2g.ConvertError) as e:
            groups = {}
            for g in extra:
                name, _, rs = g.partition("=")
                groups[name] = [int(x) for x in rs.split(",")]
            c2g.convert(prefix, groups, None)
        return str(e.exception)

    def test_send_after_compute_starts_when_the_compute_ends(self):
        # Rank 0 computes 5 us, then sends 10 kB to rank 1, which computes after receiving.
        t = write_trace(self.d, "p2p", [
            [node(1, pb.COMP_NODE, dur_us=5),
             node(2, pb.COMM_SEND_NODE, deps=[1], comm_dst=1, comm_size=10_000, comm_tag=7)],
            [node(1, pb.COMM_RECV_NODE, comm_src=0, comm_size=10_000, comm_tag=7),
             node(2, pb.COMP_NODE, deps=[1], dur_us=2)],
        ])
        goal = self.convert(t)
        with open(goal) as f:
            text = f.read()
        self.assertIn("send 10000b to 1 tag 7", text)
        self.assertIn("calc 5000", text)
        rows, _ = run_goal(goal, 2, self.d)
        self.assertEqual(len(rows), 1)
        f = rows[0]
        self.assertEqual((f["src"], f["dst"], f["size_bytes"]), ("0", "1", "10000"))
        self.assertEqual(int(f["start_ps"]), 5_000_000, "the send waits for the 5 us compute")

    def test_allreduce_moves_its_bytes_and_runs_as_dcsims_own_ring(self):
        # Four ranks: 1 us of compute, a 4 MB all-reduce, compute. The expansion is a ring:
        # 2(n-1) steps of S/n per rank; with slices it pipelines as dcsim's own ring does.
        size, n = 4_000_000, 4
        ranks = [[node(1, pb.COMP_NODE, dur_us=1),
                  node(2, pb.COMM_COLL_NODE, deps=[1], comm_type=pb.ALL_REDUCE,
                       comm_size=size, pg_name="0"),
                  node(3, pb.COMP_NODE, deps=[2], dur_us=1)] for _ in range(n)]
        goal = self.convert(write_trace(self.d, "ar", ranks), "--slice", "512KiB")
        rows, run = run_goal(goal, n, self.d)
        self.assertEqual(sum(int(r["size_bytes"]) for r in rows), 2 * (n - 1) * size)
        self.assertTrue(all(r["rcv_finish_ps"] for r in rows))
        self.assertEqual(min(int(r["start_ps"]) for r in rows), 1_000_000)
        t_goal = max(int(r["rcv_finish_ps"]) for r in rows) - 1_000_000
        # dcsim's own ring all-reduce of the same size, pieces and ranks, for comparison.
        native = run_dcsim(
            f'kind = "collective"\nop = "allreduce"\nsize = "{size}B"\nslice = "512KiB"\n',
            n,
            os.path.join(self.d, "native"),
        )
        with open(os.path.join(native, "collectives.csv")) as f:
            t_native = float(next(csv.DictReader(f))["time_us"]) * 1e6
        print(f"all-reduce from Chakra: {t_goal / 1e6:.2f} us, dcsim's ring {t_native / 1e6:.2f} us")
        # The same pieces with the same dependencies (the slots never bind here): the same
        # time, to the picosecond (time_us has six decimals).
        self.assertLess(abs(t_goal - t_native), 1.5, f"{t_goal} ps vs {t_native} ps")
        with open(os.path.join(run, "summary.json")) as f:
            json.load(f)

    def test_groups_keep_collectives_among_their_ranks(self):
        # Two groups of two: each all-gathers among its own ranks only.
        ranks = [[node(1, pb.COMM_COLL_NODE, comm_type=pb.ALL_GATHER, comm_size=64_000,
                       pg_name="a" if r < 2 else "b")] for r in range(4)]
        t = write_trace(self.d, "grp", ranks)
        goal = self.convert(t, "--group", "a=0,1", "--group", "b=2,3")
        rows, _ = run_goal(goal, 4, self.d)
        pairs = {(r["src"], r["dst"]) for r in rows}
        self.assertEqual(pairs, {("0", "1"), ("1", "0"), ("2", "3"), ("3", "2")})
        # Without the groups, a group's collectives would run over every rank, which ranks
        # 2 and 3 (or 0 and 1) never issue: refused, naming the group and the way out.
        m = self.refused(t)
        self.assertIn("process group `a`", m)
        self.assertIn("--group", m)

    def test_a_broadcast_starts_at_its_root(self):
        # The `root` attribute, 0 included, names the first sender; without it, the group's
        # first rank (here rank 1: the group lists 1 before 0).
        def first_sender(root):
            extra = {} if root is None else {"root": root}
            ranks = [[node(1, pb.COMM_COLL_NODE, comm_type=pb.BROADCAST, comm_size=1000,
                           pg_name="g", **extra)] for _ in range(2)]
            text, _ = c2g.convert(write_trace(self.d, f"bc{root}", ranks), {"g": [1, 0]}, None)
            block = text.split("rank 0 {")[1].split("}")[0]
            return 0 if "send 1000b to 1" in block else 1

        self.assertEqual(first_sender(0), 0)
        self.assertEqual(first_sender(1), 1)
        self.assertEqual(first_sender(None), 1)

    def test_bad_traces_are_refused_naming_the_file_and_node(self):
        ar = lambda size: [node(4, pb.COMM_COLL_NODE, comm_type=pb.ALL_REDUCE,  # noqa: E731
                                comm_size=size)]
        t = write_trace(self.d, "sz", [ar(1000), ar(2000)])
        m = self.refused(t)
        self.assertIn("sz.0.et node 4", m)
        self.assertIn("sz.1.et node 4", m)
        t = write_trace(self.d, "dep", [[node(1, pb.COMP_NODE, deps=[9], dur_us=1)]])
        self.assertIn("dep.0.et: node 1", self.refused(t))
        self.assertIn("node 9", self.refused(t))
        t = write_trace(self.d, "red", [[node(2, pb.COMM_COLL_NODE, comm_type=pb.REDUCE,
                                              comm_size=8)]] * 2)
        self.assertIn("REDUCE is not converted", self.refused(t))
        t = write_trace(self.d, "cnt", [ar(1000) + [node(5, pb.COMM_COLL_NODE,
                                                         comm_type=pb.ALL_REDUCE,
                                                         comm_size=1000)], ar(1000)])
        m = self.refused(t)
        self.assertIn("cnt.0.et has 2 collectives", m)
        t = write_trace(self.d, "peer", [[node(1, pb.COMM_SEND_NODE, comm_dst=5,
                                               comm_size=10)]] * 2)
        self.assertIn("`comm_dst` = 5", self.refused(t))
        # A missing rank file.
        t = write_trace(self.d, "gap", [[node(1, pb.COMP_NODE, dur_us=1)]] * 3)
        os.remove(os.path.join(self.d, "gap.1.et"))
        self.assertIn("ranks [1] missing", self.refused(t))
        # A file that is not a Chakra trace.
        with open(os.path.join(self.d, "junk.0.et"), "wb") as f:
            f.write(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")
        self.assertIn("junk.0.et", self.refused(os.path.join(self.d, "junk")))


if __name__ == "__main__":
    unittest.main()
