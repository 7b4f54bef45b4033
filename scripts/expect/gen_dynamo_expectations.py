#!/usr/bin/env python3
"""Record what Dynamo and torch.fx make of the cases Dynamo special-cases.

Run from the repository root with a Python that has torch and einops:

    "$VENV"/bin/python scripts/expect/gen_dynamo_expectations.py

Every ``tests/fixtures/dynamo/*.py`` defines one ``Model`` and a header line
``# staticfx-case: inputs x=[2,8] compare=dynamo|fx``. The module is imported
under its file stem (so a function ``f`` in ``allow_in_graph.py`` is the
target ``allow_in_graph.f``), ``Model()`` is built in eval mode and:

  1. ``torch.compile`` with a backend that records each graph Dynamo hands it,
     with the shape and dtype of each node's example value;
  2. ``torch._dynamo.explain`` for the graph breaks, as (line, gb id) with the
     gb id read from Dynamo's graph_break_registry.json;
  3. ``torch.fx.symbolic_trace`` + ShapeProp, or the error it raises.

``compare`` says which of the two graphs staticfx's graph must equal
(tests/dynamo_special.rs); the case file says why in its note. The output is
``tests/expected/dynamo/<stem>.json``; two runs write the same bytes.
"""

import importlib.util
import json
import re
import sys
from pathlib import Path

import torch
import torch._dynamo
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "scripts" / "breaks"))
sys.dont_write_bytecode = True

from gen_fx_expectations import describe_error, dtype_name, node_record, node_target, encode, encode_kwargs  # noqa: E402
from label_breaks import gb_type_map, gb_types_in, load_registry  # noqa: E402

CASES = REPO / "tests" / "fixtures" / "dynamo"
OUT = REPO / "tests" / "expected" / "dynamo"
HEADER = re.compile(r"^# staticfx-case: inputs (?P<inputs>.*?) compare=(?P<compare>dynamo|fx)\s*$", re.M)
NOTE = re.compile(r"^# staticfx-note: (?P<note>.*)$", re.M)
INPUT = re.compile(r"(?P<name>\w+)=\[(?P<dims>[\d,]*)\]")


def example_meta(node):
    v = node.meta.get("example_value")
    if isinstance(v, torch.Tensor):
        return [int(d) for d in v.shape], dtype_name(v.dtype)
    return None, None


def dynamo_record(node):
    shape, dtype = example_meta(node)
    return {
        "name": node.name,
        "op": node.op,
        "target": node_target(node),
        "args": encode(list(node.args)),
        "kwargs": encode_kwargs(node.kwargs),
        "shape": shape,
        "dtype": dtype,
    }


def run(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    header = HEADER.search(text)
    inputs = [
        (m["name"], [int(d) for d in m["dims"].split(",") if d])
        for m in INPUT.finditer(header["inputs"])
    ]
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)

    torch.manual_seed(0)
    model = module.Model().eval()
    gen = torch.Generator().manual_seed(0)
    args = [torch.randn(shape, generator=gen) for _, shape in inputs]

    graphs = []

    def record(gm, example_inputs):
        graphs.append([dynamo_record(n) for n in gm.graph.nodes])
        return gm.forward

    torch._dynamo.reset()
    torch.compile(model, backend=record)(*args)

    torch._dynamo.reset()
    known = gb_type_map(load_registry())
    breaks = []
    for r in torch._dynamo.explain(model)(*args).break_reasons:
        frames = [f for f in r.user_stack if Path(f.filename).name == path.name]
        types = gb_types_in(str(r.reason), known)
        breaks.append({
            "line": frames[-1].lineno if frames else None,
            "gb_id": known[types[0]] if types else None,
        })

    try:
        gm = torch.fx.symbolic_trace(model)
        with torch.no_grad():
            ShapeProp(gm).propagate(*args)
        fx = {"nodes": [node_record(n) for n in gm.graph.nodes]}
    except Exception as e:  # what torch.fx cannot trace is part of the record
        fx = {"error": describe_error("symbolic_trace", e)}

    return {
        "case": path.name,
        "note": NOTE.search(text)["note"],
        "compare": header["compare"],
        "inputs": {name: shape for name, shape in inputs},
        "torch_version": torch.__version__,
        "breaks": breaks,
        "dynamo_graphs": graphs,
        "fx": fx,
    }


def main(argv):
    paths = [CASES / a for a in argv] if argv else sorted(CASES.glob("*.py"))
    for p in paths:
        doc = run(p)
        text = json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
        (OUT / f"{p.stem}.json").write_text(text, encoding="utf-8")
        print(f"{p.stem}: {len(doc['dynamo_graphs'])} graph(s), {len(doc['breaks'])} break(s)")


if __name__ == "__main__":
    main(sys.argv[1:])
