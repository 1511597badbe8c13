"""Tests of analysis.report: the leaderboard (issue 5 item 7) and the self-contained HTML page (issue 3)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alienbench_data.schema import DIM_COLUMNS, DIMENSIONS
from analysis import report

CONDITIONS = ("baseline", "departure_primed", "constrained_ammonia")
EVIL = 'evil/<script>alert("x")</script>&co'


def synthetic(models: list[str], n_per: int = 4, seed: int = 0, new: str | None = None):
    rng = np.random.default_rng(seed)
    rows, gens = [], []
    for k, model in enumerate(models):
        for c in CONDITIONS:
            for i in range(n_per):
                gid = f"{rng.integers(0, 10**9):09d}-{k}-{c}-{i}"
                gens.append(
                    {
                        "generation_id": gid,
                        "model": model,
                        "condition": c,
                        "response_words": int(rng.integers(50, 500)),
                        "completion_tokens": int(rng.integers(100, 900)),
                        "likely_truncated": bool(rng.random() < 0.3),
                        "quality_flags": np.array([], dtype=object),
                        "added_in_version": "1.1.0" if model == new else "1.0.0",
                    }
                )
                for j in ("j/a", "j/b", "j/c"):
                    dims = (rng.random(10) < (k + 1) / (len(models) + 2)).astype(np.int8)
                    row = {"generation_id": gid, "model": model, "condition": c, "judge": j}
                    row.update(dict(zip(DIM_COLUMNS, dims, strict=True)))
                    row["ward_score"] = np.int8(dims.sum())
                    row["added_in_version"] = "1.1.0" if model == new else "1.0.0"
                    rows.append(row)
    return pd.DataFrame(rows), pd.DataFrame(gens)


MODELS = [f"prov{k % 4}/model-{k:02d}" for k in range(10)] + [EVIL]


@pytest.fixture(scope="module")
def board():
    scores, gens = synthetic(MODELS, new=EVIL)
    return scores, gens, report.leaderboard({"scores": scores, "generations": gens}, n_boot=200)


def test_leaderboard_columns_values_and_new_model(board):
    scores, _gens, lb = board
    assert len(lb) == 11 and set(lb["model"]) == set(MODELS)
    head = ["rank", "model", "mean", "ci_low", "ci_high", "n"]
    assert list(lb.columns[:6]) == head
    assert [f"mean_{c}" for c in ("baseline", "departure_primed", "constrained_ammonia")] == [
        c for c in lb.columns if c.startswith("mean_")
    ]  # config order, not alphabetical
    assert [f"rate_{d}" for d in DIMENSIONS] == [c for c in lb.columns if c.startswith("rate_")]
    for col in ("per_100_words", "per_100_tokens", "adjusted_mean", "adjusted_rank", "rank_change"):
        assert col in lb.columns
    # sorted by rank; rank 1 = highest mean
    assert list(lb["rank"]) == sorted(lb["rank"]) and lb["mean"].iat[0] == lb["mean"].max()
    # hand computation for one model: judge mean per generation, then mean over generations
    m = MODELS[3]
    per_gen = scores[scores["model"] == m].groupby(["generation_id", "condition"])["ward_score"].mean()
    row = lb.set_index("model").loc[m]
    assert row["mean"] == pytest.approx(per_gen.mean(), abs=1e-12)
    assert row["mean_departure_primed"] == pytest.approx(per_gen.xs("departure_primed", level=1).mean(), abs=1e-12)
    rate = scores[scores["model"] == m].groupby("generation_id")["dim_habitat"].mean().mean()
    assert row["rate_habitat"] == pytest.approx(rate, abs=1e-12)
    assert row["n"] == 12
    assert row["ci_low"] <= row["mean"] <= row["ci_high"]
    new = lb.set_index("model")["is_new"]
    assert bool(new[EVIL]) and not new.drop(EVIL).any()
    assert lb.set_index("model").at[EVIL, "added_in_version"] == "1.1.0"
    assert list(lb["rank_change"]) == list(lb["rank"] - lb["adjusted_rank"])


def test_leaderboard_subset_options(board):
    scores, gens, _lb = board
    one = report.leaderboard({"scores": scores, "generations": gens}, n_boot=50, judges=["j/b"])
    hand = scores[scores["judge"] == "j/b"].groupby("model")["ward_score"].mean()
    np.testing.assert_allclose(one.set_index("model")["mean"].loc[hand.index], hand.to_numpy(float))
    trunc = report.leaderboard({"scores": scores, "generations": gens}, n_boot=50, exclude_flags=("likely_truncated",))
    assert trunc["n"].sum() == (~gens["likely_truncated"]).sum()


def _write(board, tmp_path, figures=()):
    _scores, _gens, lb = board
    tables = {
        "table_departure_freq": pd.DataFrame(
            {"dimension": list(DIMENSIONS), "departure_rate": np.linspace(0.1, 0.9, 10)}
        ),
        "long <table>": pd.DataFrame({"x": range(100)}),
    }
    prov = {
        "dataset_version": "1.1.0",
        "manifest_sha256": "ab" * 32,
        "git_commit": "0123456789abcdef",
        "parameters": {"n_boot": 10000, "seed": 1234, "note": "<b>bold?</b>"},
    }
    return report.write_report(tmp_path, leaderboard=lb, tables=tables, figures=list(figures), provenance=prov)


def _png(path: Path, color: tuple[float, float, float]) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))
    FigureCanvasAgg(fig)
    fig.add_subplot().plot([0, 1], [0, 1], color=color)
    fig.savefig(path, dpi=30)
    return path


def test_report_contains_every_model_and_escapes_text(board, tmp_path):
    path = _write(board, tmp_path)
    assert path == tmp_path / "report.html"
    text = path.read_text(encoding="utf-8")
    for m in MODELS:
        assert (m.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")) in text
    assert "<script" not in text.lower()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;co" in text
    assert "&lt;b&gt;bold?&lt;/b&gt;" in text and "<b>" not in text
    assert "long &lt;table&gt;" in text
    assert "First 60 of 100 rows" in text
    assert "new in v1.1.0" in text  # the submitted model is marked
    for key in ("1.1.0", "ab" * 32, "0123456789abcdef"):
        assert key in text  # provenance


def test_report_embeds_images_and_has_no_external_urls(board, tmp_path):
    a = _png(tmp_path / "fig_a.png", (1, 0, 0))
    b = _png(tmp_path / "fig_b.png", (0, 0, 1))
    path = _write(board, tmp_path / "out", figures=[a, a.with_suffix(".pdf"), b])  # a PDF maps to its PNG
    text = path.read_text(encoding="utf-8")
    uris = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(uris) == 2
    assert base64.b64decode(uris[0]) == a.read_bytes() and base64.b64decode(uris[1]) == b.read_bytes()
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:|//|file:)", text, re.I)
    assert not re.search(r"https?://", text)
    assert "@import" not in text and "url(" not in text
    assert "<link" not in text.lower() and "<script" not in text.lower()


def test_report_is_deterministic(board, tmp_path):
    a = _write(board, tmp_path / "a").read_bytes()
    b = _write(board, tmp_path / "b").read_bytes()
    assert a == b


@pytest.fixture(scope="module")
def dataset(built_dataset):
    """The dataset built once per session from the authors' release (tests/conftest.py)."""
    return Path(built_dataset)


@pytest.mark.release
def test_leaderboard_on_release_matches_reported_scores(dataset, reported_dir):
    lb = report.leaderboard(dataset).set_index("model")
    rep = pd.read_csv(reported_dir / "table_length_adjusted_per_model.csv").set_index("subject_model")
    assert sorted(lb.index) == sorted(rep.index)
    for m in rep.index:
        assert lb.at[m, "mean"] == pytest.approx(rep.at[m, "mean_ward"], abs=1e-9)
        assert lb.at[m, "ci_low"] == pytest.approx(rep.at[m, "ward_ci_lo"], abs=1e-9)
        assert lb.at[m, "ci_high"] == pytest.approx(rep.at[m, "ward_ci_hi"], abs=1e-9)
        assert lb.at[m, "per_100_tokens"] == pytest.approx(rep.at[m, "mean_ward_per_100"], abs=1e-9)
    assert lb.index[0] == "deepseek/deepseek-v3.2" and lb["rank"].iat[-1] == 10
    assert not lb["is_new"].any() and (lb["added_in_version"] == "1.0.0").all()
    # pooled departure rates (spec A5 / table_departure_freq) are the mean of the per-model rates (equal n)
    freq = pd.read_csv(reported_dir / "table_departure_freq.csv").set_index("dimension")["departure_rate"]
    for d in DIMENSIONS:
        assert lb[f"rate_{d}"].mean() == pytest.approx(freq[d], abs=1e-9)


@pytest.mark.release
@pytest.mark.slow
def test_appended_model_is_ranked_and_marked_in_the_report(dataset, release_dir, tmp_path):
    """Issue 5 item 7: after a model is appended as a new version, the leaderboard ranks it with the
    others and the HTML report marks it with its added_in_version."""
    import alienbench_data as ab
    from alienbench_data.build import build
    from alienbench_data.versioning import append_version
    from analysis import figures

    held_out, new_name = "anthropic/claude-opus-4.7", "acme/replayed-<claude>"
    ds = tmp_path / "ds"
    build(release_dir, ds, exclude_models=(held_out,))
    gens = ab.load("generations", "main", data_dir=dataset)
    scores = ab.load("scores", "main", data_dir=dataset)

    def renamed(df: pd.DataFrame) -> pd.DataFrame:
        df = df[df["model"] == held_out]
        return df.assign(model=new_name, generation_id="r-" + df["generation_id"])  # keeps the id order

    append_version(
        ds, {"generations": {"main": renamed(gens)}, "scores": {"main": renamed(scores)}}, tag="acme", note="t"
    )
    lb = report.leaderboard(ds).set_index("model")
    full = report.leaderboard(dataset).set_index("model")
    assert len(lb) == 10 and new_name in lb.index and held_out not in lb.index
    assert lb.at[new_name, "added_in_version"] == "1.1.0" and bool(lb.at[new_name, "is_new"])
    assert not lb["is_new"].drop(new_name).any()
    for col in ("mean", "ci_low", "ci_high", "rank", "per_100_words", "mean_baseline", "rate_symmetry"):
        assert lb.at[new_name, col] == pytest.approx(full.at[held_out, col], abs=1e-12), col

    paths = figures.draw_all(ds, tmp_path / "out", n_boot=200, dpi=40)
    html = report.write_report(
        tmp_path / "out",
        leaderboard=lb.reset_index(),
        tables={},
        figures=paths,
        provenance={"dataset_version": ab.manifest_of(ds).version},
    ).read_text(encoding="utf-8")
    assert 'acme/replayed-&lt;claude&gt;<span class="badge">new in v1.1.0</span>' in html
    assert html.count("data:image/png;base64,") == 5


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=st.floats(min_value=-10, max_value=10, allow_nan=False), seed=st.integers(0, 2**16))
def test_leaderboard_shift_property(c, seed):
    """Adding c to every judge score shifts every score-level column by c and keeps every ranking."""
    scores, gens = synthetic(MODELS[:5], n_per=3, seed=seed)
    shifted = scores.assign(ward_score=scores["ward_score"].astype(float) + c)
    a = report.leaderboard({"scores": scores, "generations": gens}, n_boot=100).set_index("model")
    b = report.leaderboard({"scores": shifted, "generations": gens}, n_boot=100).set_index("model").loc[a.index]
    cols = ["mean", "ci_low", "ci_high", "adjusted_mean", "adjusted_ci_low", "adjusted_ci_high"]
    cols += [x for x in a.columns if x.startswith("mean_")]
    for col in cols:
        np.testing.assert_allclose(b[col], a[col] + c, atol=1e-8, err_msg=col)
    for col in ("rank", "adjusted_rank", "rank_change"):
        assert list(a[col]) == list(b[col]), col
