#!/usr/bin/env python3
"""Converts Chakra execution traces (MLCommons; one protobuf file per rank) into a GOAL
schedule that dcsim runs natively (`[workload] kind = "goal"`).

    pip install mlc-chakra            # the format's own package (its protobuf schema)
    python3 python/chakra2goal.py traces/llm -o llm.goal          # traces/llm.0.et, .1.et, ...
    python3 python/chakra2goal.py traces/ -o llm.goal --slice 1MiB --group tp0=0,1,2,3

What it models (see docs/ai.md, "Chakra traces"):

* COMP_NODE: `calc` of its `duration_micros`, in ns. METADATA, MEM_LOAD and MEM_STORE
  nodes: `calc` of their duration (0 when none): they keep their place in the dependencies.
* COMM_SEND_NODE / COMM_RECV_NODE: `send` to `comm_dst` / `recv` from `comm_src`, of
  `comm_size` bytes, with `comm_tag` (0 when none).
* COMM_COLL_NODE: expanded into point-to-point messages by an algorithm, as Schedgen does
  for ATLAHS: ALL_REDUCE as a ring (2(n-1) steps of size/n), ALL_GATHER, REDUCE_SCATTER and
  REDUCE_SCATTER_BLOCK as a ring (n-1 steps of size/n), ALL_TO_ALL direct (size/n to every
  other rank at once), BROADCAST as a chain from the group's first rank (or the `root`
  attribute), BARRIER as a ring all-gather of one byte per rank. `comm_size` is read as
  nccl-tests reads its size: the all-reduce buffer, the all-gather output, the
  reduce-scatter input, the all-to-all buffer per rank, the broadcast buffer. With
  `--slice`, each step's data moves in pieces of at most that many bytes, piece j of a step
  waiting only for piece j of the step before (pipelined); without, one message per step.
* Groups: a collective runs over the ranks `--group NAME=r0,r1,...` gives for its `pg_name`
  attribute, or over every rank of the trace when its process group is not given (the
  converter says which process groups it ran over every rank). The k-th collective of a
  group at one rank matches the k-th at every other rank of the group (as on a NCCL
  communicator); their types and sizes must agree.
* Dependencies: `data_deps` and `ctrl_deps` both become `requires`. A node that depends on
  a collective waits for the collective's last messages at its rank (the last step's sends
  and receives); a collective's first sends wait for its own dependencies.

Refused, naming the file and the node: a node type or collective it does not convert
(REDUCE, GATHER, SCATTER), a dependency on a node not in the file, a send or receive
without a peer, a collective whose group lacks the rank or whose matching collectives
differ, ranks missing from the file set. dcsim then refuses, with the GOAL line, what only
the whole schedule shows (a send without its receive, a dependency cycle).

Not modelled: tensor sizes and operation counts of compute nodes (their recorded duration
is used), memory nodes' transfers, NCCL's channels and protocols (use dcsim's own
`collective` and `training` workloads for those).
"""

from __future__ import annotations

import argparse
import os
import re
import sys

NODE_TYPES = {
    0: "INVALID_NODE",
    1: "METADATA_NODE",
    2: "MEM_LOAD_NODE",
    3: "MEM_STORE_NODE",
    4: "COMP_NODE",
    5: "COMM_SEND_NODE",
    6: "COMM_RECV_NODE",
    7: "COMM_COLL_NODE",
}
COLL_TYPES = {
    0: "ALL_REDUCE",
    1: "REDUCE",
    2: "ALL_GATHER",
    3: "GATHER",
    4: "SCATTER",
    5: "BROADCAST",
    6: "ALL_TO_ALL",
    7: "REDUCE_SCATTER",
    8: "REDUCE_SCATTER_BLOCK",
    9: "BARRIER",
}
CONVERTED = {"ALL_REDUCE", "ALL_GATHER", "BROADCAST", "ALL_TO_ALL", "REDUCE_SCATTER",
             "REDUCE_SCATTER_BLOCK", "BARRIER"}


class ConvertError(Exception):
    """A trace the converter refuses; the message names the file and node."""


def chakra():
    """The format's own reader (mlc-chakra), or a clear error."""
    try:
        from chakra.schema.protobuf import et_def_pb2
        from chakra.src.third_party.utils import protolib
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ConvertError(
            f"the Chakra package is not installed ({e}): pip install mlc-chakra"
        ) from e
    return et_def_pb2, protolib


def parse_size(text: str) -> int:
    """Bytes from `1048576`, `512KiB`, `1MiB`, `4MB`."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]i?B|B)?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"`{text}` is not a size (e.g. 1MiB, 4MB, 65536)")
    n, unit = int(m.group(1)), m.group(2) or "B"
    scale = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9,
             "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
    if n * scale == 0:
        raise argparse.ArgumentTypeError("the slice must be at least one byte")
    return n * scale


def rank_files(path: str) -> list[str]:
    """The per-rank files: `path` a directory of `<name>.<rank>.et` files (one name), or a
    prefix `dir/name` of `dir/name.<rank>.et`; ranks 0..n-1, none missing."""
    if os.path.isdir(path):
        d, prefix = path, None
    else:
        d, prefix = os.path.dirname(path) or ".", os.path.basename(path)
    found: dict[str, dict[int, str]] = {}
    for f in sorted(os.listdir(d)):
        m = re.fullmatch(r"(.*)\.(\d+)\.et", f)
        if m and (prefix is None or m.group(1) == prefix):
            found.setdefault(m.group(1), {})[int(m.group(2))] = os.path.join(d, f)
    if not found:
        want = f"{path}.<rank>.et" if prefix else f"<name>.<rank>.et in {path}"
        raise ConvertError(f"{path}: no Chakra trace files ({want})")
    if len(found) > 1:
        raise ConvertError(
            f"{path}: traces of several names ({', '.join(sorted(found))}): give the prefix"
        )
    (name, files), = found.items()
    n = max(files) + 1
    missing = [r for r in range(n) if r not in files]
    if missing:
        raise ConvertError(
            f"{os.path.join(d, name)}: ranks {missing} missing of 0..{n - 1} "
            f"(expected {name}.<rank>.et for every rank)"
        )
    return [files[r] for r in range(n)]


def attrs(node) -> dict:
    """A node's attributes by name, as Python values."""
    out = {}
    for a in node.attr:
        kind = a.WhichOneof("value")
        out[a.name] = getattr(a, kind) if kind else None
    return out


def read_rank(path: str, pb, protolib) -> list:
    """The nodes of one rank's file, in file order."""
    try:
        fh = protolib.openFileRd(path)
    except OSError as e:
        raise ConvertError(f"{path}: {e}") from e
    nodes = []
    with fh:
        meta = pb.GlobalMetadata()
        try:
            if not protolib.decodeMessage(fh, meta):
                raise ConvertError(f"{path}: empty: no global metadata")
            while True:
                node = pb.Node()
                if not protolib.decodeMessage(fh, node):
                    break
                nodes.append(node)
        except ConvertError:
            raise
        except Exception as e:  # protobuf's DecodeError and truncated varints
            raise ConvertError(
                f"{path}: node record {len(nodes)}: not a Chakra protobuf record ({e})"
            ) from e
    return nodes


def split(total: int, n: int) -> list[int]:
    """`total` bytes in `n` parts differing by at most one byte (the first ones longer)."""
    q, r = divmod(total, n)
    return [q + (1 if i < r else 0) for i in range(n)]


class Rank:
    """One rank's GOAL block under construction."""

    def __init__(self):
        self.ops: list[str] = []
        self.deps: list[tuple[str, str]] = []

    def op(self, label: str, text: str) -> str:
        self.ops.append(f"{label}: {text}")
        return label

    def require(self, label: str, on: list[str]):
        for x in on:
            self.deps.append((label, x))


def expand(kind: str, size: int, group: list[int], root: int, slice_: int | None,
           tag: int, blocks: dict[int, Rank], label: str, entry: dict[int, list[str]]):
    """Adds collective `kind` of `size` bytes over `group` (ranks) to every rank's block;
    returns per rank the labels that complete it there."""
    n = len(group)
    pos = {r: i for i, r in enumerate(group)}
    exits: dict[int, list[str]] = {r: [] for r in group}
    if n == 1:
        for r in group:
            exits[r] = [blocks[r].op(f"{label}_0", "calc 0")]
            blocks[r].require(exits[r][0], entry[r])
        return exits

    def pieces(b: int) -> list[int]:
        k = 1 if slice_ is None else max(1, -(-b // slice_))
        return split(b, k)

    def msg(a: int, b: int, size_: int, step: str, after: list[str]):
        s = blocks[a].op(f"{label}_{step}s", f"send {size_}b to {b} tag {tag}")
        blocks[a].require(s, after)
        rcv = blocks[b].op(f"{label}_{step}r", f"recv {size_}b from {a} tag {tag}")
        return s, rcv

    if kind in ("ALL_REDUCE", "ALL_GATHER", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK",
                "BARRIER"):
        if kind == "BARRIER":
            chunks, steps = [1] * n, n - 1
        else:
            chunks = split(size, n)
            steps = 2 * (n - 1) if kind == "ALL_REDUCE" else n - 1
        # got[r][j]: the receive of piece j at rank r in the step before.
        got: dict[int, list[str] | None] = {r: None for r in group}
        for s in range(steps):
            now: dict[int, list[str]] = {}
            sends: dict[int, list[str]] = {}
            for r in group:
                to = group[(pos[r] + 1) % n]
                b = chunks[(pos[r] - s) % n]
                ps = pieces(b)
                rs = []
                for j, p in enumerate(ps):
                    prev = got[r]
                    after = entry[r] if prev is None else [prev[min(j, len(prev) - 1)]]
                    snd, rcv = msg(r, to, p, f"{s}_{j}", after)
                    sends.setdefault(r, []).append(snd)
                    rs.append(rcv)
                now[to] = rs
            got = now
            if s == steps - 1:
                for r in group:
                    exits[r] = sends.get(r, []) + now.get(r, [])
        return exits
    if kind == "ALL_TO_ALL":
        each = size // n
        for r in group:
            for k in range(1, n):
                to = group[(pos[r] + k) % n]
                for j, p in enumerate(pieces(each)):
                    snd, rcv = msg(r, to, p, f"{k}_{j}", entry[r])
                    exits[r].append(snd)
                    exits[to].append(rcv)
        return exits
    if kind == "BROADCAST":
        order = group[pos[root]:] + group[:pos[root]]
        for j, p in enumerate(pieces(size)):
            after = entry[order[0]]
            for k in range(n - 1):
                a, b = order[k], order[k + 1]
                snd, rcv = msg(a, b, p, f"{k}_{j}", after + (entry[a] if k else []))
                exits[a].append(snd)
                exits[b].append(rcv)
                after = [rcv]
        return exits
    raise AssertionError(kind)


def convert(path: str, groups: dict[str, list[int]], slice_: int | None) -> tuple[str, dict]:
    """The GOAL text of the trace at `path`, and a summary (counts, groups run over every
    rank)."""
    pb, protolib = chakra()
    files = rank_files(path)
    n = len(files)
    ranks = [read_rank(f, pb, protolib) for f in files]
    for name, members in groups.items():
        bad = [r for r in members if not 0 <= r < n]
        if bad or len(set(members)) != len(members) or len(members) < 1:
            raise ConvertError(
                f"--group {name}: ranks must be distinct, in 0..{n - 1}; got {members}"
            )
    world = list(range(n))
    by_id: list[dict[int, object]] = []
    for r, nodes in enumerate(ranks):
        ids = {}
        for nd in nodes:
            if nd.id in ids:
                raise ConvertError(f"{files[r]}: node {nd.id}: the id is used twice")
            ids[nd.id] = nd
        by_id.append(ids)
    # Collectives per (group, rank) in file order, for matching.
    colls: dict[str, dict[int, list]] = {}
    defaulted = set()
    max_tag = -1
    for r, nodes in enumerate(ranks):
        for nd in nodes:
            a = attrs(nd)
            where = f"{files[r]}: node {nd.id} ({nd.name or 'unnamed'})"
            for d in list(nd.data_deps) + list(nd.ctrl_deps):
                if d not in by_id[r]:
                    raise ConvertError(f"{where}: depends on node {d}, which is not in the file")
            t = NODE_TYPES.get(nd.type, f"type {nd.type}")
            if t == "INVALID_NODE" or t.startswith("type "):
                raise ConvertError(f"{where}: node type {t} is not converted")
            if t in ("COMM_SEND_NODE", "COMM_RECV_NODE"):
                key = "comm_dst" if t == "COMM_SEND_NODE" else "comm_src"
                peer = a.get(key)
                if peer is None or not 0 <= int(peer) < n or int(peer) == r:
                    raise ConvertError(
                        f"{where}: `{key}` = {peer}: must be another rank in 0..{n - 1}")
                if "comm_size" not in a:
                    raise ConvertError(f"{where}: no `comm_size`")
                max_tag = max(max_tag, int(a.get("comm_tag", 0) or 0))
            if t == "COMM_COLL_NODE":
                ct = COLL_TYPES.get(a.get("comm_type"), f"comm_type {a.get('comm_type')}")
                if ct not in CONVERTED:
                    raise ConvertError(
                        f"{where}: collective {ct} is not converted "
                        f"(converted: {', '.join(sorted(CONVERTED))})")
                if "comm_size" not in a and ct != "BARRIER":
                    raise ConvertError(f"{where}: no `comm_size`")
                pg = str(a.get("pg_name", "") or "")
                if pg not in groups:
                    defaulted.add(pg)
                members = groups.get(pg, world)
                if r not in members:
                    raise ConvertError(
                        f"{where}: rank {r} is not in process group `{pg}` ({members})")
                colls.setdefault(pg, {}).setdefault(r, []).append((nd, ct))
    # Match the k-th collective of each group across its ranks.
    plan = {}  # (rank, node id) -> (kind, size, group, root, tag, label)
    next_tag = max(max_tag + 1, 1 << 20)
    for pg in sorted(colls):
        members = groups.get(pg, world)
        per = colls[pg]
        counts = {r: len(per.get(r, [])) for r in members}
        if len(set(counts.values())) != 1:
            lo = min(members, key=lambda r: counts[r])
            hi = max(members, key=lambda r: counts[r])
            raise ConvertError(
                f"process group `{pg}`: {files[hi]} has {counts[hi]} collectives, "
                f"{files[lo]} has {counts[lo]}: every rank of the group must issue the same "
                "collectives (give the group's ranks with --group NAME=r0,r1,...)")
        first = members[0]
        for k in range(counts[first]):
            nd0, ct0 = per[first][k]
            size0 = int(attrs(nd0).get("comm_size", 0) or 0)
            r0 = attrs(nd0).get("root")
            root = members[0] if r0 is None else int(r0)
            if ct0 == "BROADCAST" and root not in members:
                raise ConvertError(
                    f"{files[first]}: node {nd0.id}: root {root} is not in the group {members}")
            for r in members:
                nd, ct = per[r][k]
                size = int(attrs(nd).get("comm_size", 0) or 0)
                if (ct, size) != (ct0, size0):
                    raise ConvertError(
                        f"process group `{pg}`, collective {k}: {files[first]} node {nd0.id} is "
                        f"{ct0} of {size0} B, {files[r]} node {nd.id} is {ct} of {size} B")
                plan[(r, nd.id)] = (ct, size0, members, root, next_tag, f"c{next_tag}")
            if ct0 != "BARRIER" and size0 < len(members):
                raise ConvertError(
                    f"{files[first]}: node {nd0.id}: {ct0} of {size0} B cannot give each of "
                    f"{len(members)} ranks a byte")
            next_tag += 1
    # Emit: per rank, nodes in an order where dependencies come first (collectives are
    # expanded at every rank of their group together, in tag order).
    blocks = {r: Rank() for r in range(n)}
    exits: list[dict[int, list[str]]] = [dict() for _ in range(n)]

    def deps_of(r, nd):
        out = []
        for d in list(nd.data_deps) + list(nd.ctrl_deps):
            out.extend(exits[r][d])
        return out

    done = [set() for _ in range(n)]
    # Collectives by tag: (tag) -> {rank: node}.
    by_tag: dict[int, dict[int, object]] = {}
    for (r, nid), (_, _, _, _, tag, _) in plan.items():
        by_tag.setdefault(tag, {})[r] = by_id[r][nid]
    # Simple nodes first, in an order that respects dependencies within each rank; a
    # collective once every rank of its group has its dependencies emitted.
    pending = [list(nodes) for nodes in ranks]
    progress = True
    while progress:
        progress = False
        for r in range(n):
            keep = []
            for nd in pending[r]:
                ready = all(d in done[r] for d in list(nd.data_deps) + list(nd.ctrl_deps))
                if not ready or (r, nd.id) in plan:
                    keep.append(nd)
                    continue
                t = NODE_TYPES[nd.type]
                a = attrs(nd)
                lab = f"n{nd.id}"
                if t == "COMM_SEND_NODE":
                    text = (f"send {int(a['comm_size'])}b to {int(a['comm_dst'])} "
                            f"tag {int(a.get('comm_tag', 0) or 0)}")
                elif t == "COMM_RECV_NODE":
                    text = (f"recv {int(a['comm_size'])}b from {int(a['comm_src'])} "
                            f"tag {int(a.get('comm_tag', 0) or 0)}")
                else:
                    text = f"calc {int(nd.duration_micros) * 1000}"
                blocks[r].op(lab, text)
                blocks[r].require(lab, deps_of(r, nd))
                exits[r][nd.id] = [lab]
                done[r].add(nd.id)
                progress = True
            pending[r] = keep
        for tag in sorted(by_tag):
            members_nodes = by_tag[tag]
            if any(nd.id in done[r] for r, nd in members_nodes.items()):
                continue
            if not all(all(d in done[r] for d in list(nd.data_deps) + list(nd.ctrl_deps))
                       for r, nd in members_nodes.items()):
                continue
            r0 = next(iter(members_nodes))
            kind, size, members, root, _, label = plan[(r0, members_nodes[r0].id)]
            entry = {r: deps_of(r, nd) for r, nd in members_nodes.items()}
            ex = expand(kind, size, members, root, slice_, tag, blocks, label, entry)
            for r, nd in members_nodes.items():
                exits[r][nd.id] = ex[r]
                done[r].add(nd.id)
                pending[r] = [x for x in pending[r] if x.id != nd.id]
            progress = True
    for r in range(n):
        if pending[r]:
            nd = pending[r][0]
            raise ConvertError(
                f"{files[r]}: node {nd.id} ({nd.name or 'unnamed'}) never becomes ready: a "
                "dependency cycle, or a collective whose other ranks wait on this rank")
    out = [f"// Converted by chakra2goal from {len(files)} Chakra rank files "
           f"({os.path.basename(files[0])} ...)", f"num_ranks {n}"]
    for r in range(n):
        out.append(f"rank {r} {{")
        out.extend(f"  {o}" for o in blocks[r].ops)
        out.extend(f"  {a} requires {b}" for a, b in blocks[r].deps)
        out.append("}")
    summary = {
        "ranks": n,
        "nodes": sum(len(x) for x in ranks),
        "collectives": len(by_tag),
        "messages": sum(o.split(": ", 1)[1].startswith("send") for b in blocks.values()
                        for o in b.ops),
        "over_every_rank": sorted(defaulted & set(colls)),
    }
    return "\n".join(out) + "\n", summary


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description="Chakra execution traces (one file per rank) to a GOAL schedule for dcsim")
    p.add_argument("trace", help="a directory of <name>.<rank>.et files, or the prefix dir/name")
    p.add_argument("-o", "--output", required=True, help="the GOAL file to write")
    p.add_argument("--slice", type=parse_size, default=None,
                   help="cut each collective step into pieces of at most this size (pipelined)")
    p.add_argument("--group", action="append", default=[], metavar="NAME=R0,R1,...",
                   help="the ranks of process group NAME (pg_name); default: every rank")
    args = p.parse_args(argv)
    groups = {}
    for g in args.group:
        name, _, ranks = g.partition("=")
        try:
            groups[name] = [int(x) for x in ranks.split(",") if x.strip()]
        except ValueError:
            p.error(f"--group {g}: expected NAME=R0,R1,... (integers)")
    try:
        text, s = convert(args.trace, groups, args.slice)
    except ConvertError as e:
        print(f"chakra2goal: error: {e}", file=sys.stderr)
        return 1
    tmp = args.output + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, args.output)
    print(f"chakra2goal: {s['ranks']} ranks, {s['nodes']} nodes, {s['collectives']} collectives,"
          f" {s['messages']} messages -> {args.output}", file=sys.stderr)
    if s["over_every_rank"]:
        names = ", ".join(f"`{x}`" for x in s["over_every_rank"])
        print(f"chakra2goal: process groups {names} not given with --group: their collectives"
              " ran over every rank", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
