"""Whether helion imports here and compiles puzzle 35's solution on the GPU: the first thing
benchmarks/helion_gpu.sh asks of each helion it tries. Prints one JSON line; exit 0 if it worked."""
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

started = time.perf_counter()
row = {}
try:
    import importlib.metadata
    import importlib.util

    import helion  # noqa: F401 (the import is the first question)
    import torch
    row["helion"] = importlib.metadata.version("helion")  # helion has no __version__
    row["import_s"] = round(time.perf_counter() - started, 1)
    spec = importlib.util.spec_from_file_location("p35", ROOT / "solutions/puzzle35_helion_vector_add.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from grader.sandbox.kinds.helion.bench import compiled
    x, y = (torch.randn(5000, device="cuda") for _ in range(2))
    fn, args, config = compiled(module.helion_add, [x, y], {}, {"B0": 1024}, {})
    z = fn(*args)
    torch.cuda.synchronize()
    row["ok"] = bool(torch.equal(z, x + y))
    row["config"] = str(config)
except BaseException:  # noqa: BLE001 (what failed is the finding)
    row["ok"], row["error"] = False, traceback.format_exc()[-3000:]
row["s"] = round(time.perf_counter() - started, 1)
print(json.dumps(row))
sys.exit(0 if row["ok"] else 1)
