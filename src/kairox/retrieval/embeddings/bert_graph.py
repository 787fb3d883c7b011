"""A BERT sentence encoder (mean pooling) as an ONNX graph, built from a model's own safetensors.

No torch and no network: the weights are read straight from ``model.safetensors`` (a JSON header
and raw little-endian arrays) and laid into a hand-built graph of standard ONNX operators, which
ONNX Runtime fuses (attention, GELU, layer norm) when it loads it. The graph computes exactly what
sentence-transformers' ``Transformer`` + mean ``Pooling`` modules compute; normalising is left to
the caller. Building needs the ``onnx`` package, which is slow to import (~2 s), so the result is
cached on disk by ``kairox.retrieval.embeddings.bert_onnx`` and built once per model file.
"""

from __future__ import annotations

import json
import math
import mmap
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

OPSET = 17  # LayerNormalization
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "BF16": None}


class UnsupportedModel(ValueError):
    """The model directory is not a BERT mean-pooling sentence encoder this graph reproduces."""


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Every tensor of a safetensors file as a NumPy array (float32 where it was float)."""
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        size = int.from_bytes(mm[:8], "little")
        header = json.loads(mm[8 : 8 + size])
        base = 8 + size
        out: dict[str, npt.NDArray[Any]] = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            dtype = _DTYPES.get(info["dtype"])
            if dtype is None:
                raise UnsupportedModel(f"tensor {name} has dtype {info['dtype']}")
            start, end = info["data_offsets"]
            array = np.frombuffer(mm[base + start : base + end], dtype=dtype)
            array = array.reshape(info["shape"])
            out[name] = array.astype(np.float32) if dtype == np.float16 else array.copy()
    return out


def bert_config(directory: Path) -> dict[str, Any]:
    """The model's ``config.json``, checked to be a plain BERT with mean pooling on top."""
    try:
        config: dict[str, Any] = json.loads((directory / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise UnsupportedModel(f"no readable config.json in {directory}") from exc
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        raise UnsupportedModel("not a BERT model with GELU activations")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise UnsupportedModel("only absolute position embeddings are supported")
    pooling = directory / "1_Pooling" / "config.json"
    try:
        modes = json.loads(pooling.read_text())
    except (OSError, ValueError) as exc:
        raise UnsupportedModel("no mean-pooling config (1_Pooling/config.json)") from exc
    wanted = {k: v for k, v in modes.items() if k.startswith("pooling_mode") and v}
    if set(wanted) != {"pooling_mode_mean_tokens"}:
        raise UnsupportedModel(f"pooling {sorted(wanted)} is not mean pooling")
    return config


def build_model(directory: Path) -> bytes:
    """The serialized ONNX model: inputs ``input_ids`` and ``attention_mask`` (int64, batch x
    tokens), output ``pooled`` (float32, batch x hidden), the masked mean of the last layer."""
    from onnx import TensorProto, helper, numpy_helper

    config = bert_config(directory)
    weights = read_safetensors(directory / "model.safetensors")
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    eps = float(config.get("layer_norm_eps", 1e-12))
    head_size = hidden // heads
    nodes: list[Any] = []
    inits: list[Any] = []
    counter = iter(range(1 << 30))

    def weight(name: str, *, transpose: bool = False) -> str:
        array = weights[prefix + name]
        if transpose:
            array = np.ascontiguousarray(array.T)
        inits.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def const(values: list[int] | list[float], dtype: Any = np.int64) -> str:
        name = f"c{next(counter)}"
        inits.append(numpy_helper.from_array(np.asarray(values, dtype=dtype), name))
        return name

    def node(op: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{op.lower()}{next(counter)}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def linear(x: str, name: str) -> str:
        product = node("MatMul", [x, weight(f"{name}.weight", transpose=True)])
        return node("Add", [product, weight(f"{name}.bias")])

    def layer_norm(x: str, name: str) -> str:
        scale, bias = weight(f"{name}.weight"), weight(f"{name}.bias")
        return node("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)

    # Embeddings: words + positions 0..T-1 + token type 0 (sentence-transformers passes zeros).
    words = node("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"])
    length = node("Slice", [node("Shape", ["input_ids"]), const([1]), const([2])])
    positions = node(
        "Slice", [weight("embeddings.position_embeddings.weight"), const([0]), length, const([0])]
    )
    type_zero = weights[prefix + "embeddings.token_type_embeddings.weight"][0]
    inits.append(numpy_helper.from_array(type_zero.astype(np.float32), "type_zero"))
    state = node("Add", [node("Add", [words, positions]), "type_zero"])
    state = layer_norm(state, "embeddings.LayerNorm")

    # The additive attention mask, (B, 1, 1, T): 0 where a token is, a large negative elsewhere.
    mask = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    blocked = node(
        "Mul", [node("Sub", [const([1.0], np.float32), mask]), const([-1e4], np.float32)]
    )
    blocked = node("Unsqueeze", [blocked, const([1, 2])])
    split_heads = const([0, 0, heads, head_size])
    merge_heads = const([0, 0, hidden])
    scale = const([1.0 / math.sqrt(head_size)], np.float32)

    for i in range(int(config["num_hidden_layers"])):
        at = f"encoder.layer.{i}."
        q = node(
            "Transpose",
            [node("Reshape", [linear(state, at + "attention.self.query"), split_heads])],
            perm=[0, 2, 1, 3],
        )
        k = node(
            "Transpose",
            [node("Reshape", [linear(state, at + "attention.self.key"), split_heads])],
            perm=[0, 2, 3, 1],
        )
        v = node(
            "Transpose",
            [node("Reshape", [linear(state, at + "attention.self.value"), split_heads])],
            perm=[0, 2, 1, 3],
        )
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), blocked])
        context = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        context = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), merge_heads])
        attended = linear(context, at + "attention.output.dense")
        state = layer_norm(node("Add", [attended, state]), at + "attention.output.LayerNorm")
        inner = linear(state, at + "intermediate.dense")
        # GELU as BERT defines it: x * (1 + erf(x / sqrt 2)) / 2.
        erf = node("Erf", [node("Mul", [inner, const([1.0 / math.sqrt(2.0)], np.float32)])])
        gelu = node(
            "Mul",
            [
                node("Mul", [inner, node("Add", [erf, const([1.0], np.float32)])]),
                const([0.5], np.float32),
            ],
        )
        state = layer_norm(
            node("Add", [linear(gelu, at + "output.dense"), state]), at + "output.LayerNorm"
        )

    # Mean pooling over the tokens the mask keeps.
    weights3 = node("Unsqueeze", [mask, const([2])])
    summed = node("ReduceSum", [node("Mul", [state, weights3]), const([1])], keepdims=0)
    count = node(
        "Max", [node("ReduceSum", [mask, const([1])], keepdims=1), const([1e-9], np.float32)]
    )
    nodes.append(helper.make_node("Div", [summed, count], ["pooled"]))

    graph = helper.make_graph(
        nodes,
        "bert_mean_pooling",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return bytes(model.SerializeToString())
