"""``--sigma``: one residual SD per system from the command line, as ``fit(sigma="system")``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bayes_ir.hierarchical import fit, load_fit
from bayes_ir.readers import read_scores

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"
ROLES = ["-c", "bm25", "-C", "chal_fusion", "-C", "chal_risky"]
SAMPLER = ["--draws", "1000", "--seed", "4"]

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="data/example_scores.csv missing")


def _table():
    return read_scores(EXAMPLE).with_roles(
        champion="bm25", challengers=["chal_fusion", "chal_risky"]
    )


def test_the_fit_is_the_api_fit_with_one_sd_per_system(tmp_path, run_cli):
    saved = tmp_path / "fit.nc"
    code, out, err = run_cli(["fit", str(EXAMPLE), *ROLES, "--sigma", "system", *SAMPLER,
                              "--save", str(saved)])  # fmt: skip
    assert code == 0, err
    assert "gaussian likelihood, per-system residual SD (NUTS)" in out
    ours = load_fit(saved, _table())
    assert ours.provenance["sigma"] == "system"
    ref = fit(_table(), sigma="system", draws=1000, seed=4)
    np.testing.assert_allclose(ours.draws["sigma"], ref.draws["sigma"], rtol=1e-6)
    np.testing.assert_allclose(
        ours.contrast_draws().values, ref.contrast_draws().values, rtol=1e-5, atol=1e-7
    )
    # a saved fit read with another --sigma is used as saved, and the command says so
    code, _, err = run_cli(["decide", str(EXAMPLE), *ROLES, "--fit", str(saved),
                            "--sigma", "pooled"])  # fmt: skip
    assert code == 0
    assert "--sigma pooled differs from the saved fit's system" in err


def test_the_next_steps_keep_the_option(run_cli):
    code, out, _ = run_cli(["decide", str(EXAMPLE), *ROLES, "--sigma", "system", *SAMPLER])
    assert code == 0
    steps = out.splitlines()[out.splitlines().index("next:") + 1 :]
    review = [s for s in steps if " review " in s]
    assert review and "--sigma system" in review[0]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--sigma", "sytem"], ["--sigma", "'system'"]),
        (["--sigma", "system", "--likelihood", "auto"], ["auto", "sigma"]),
        (["--sigma", "system", "--likelihood", "bernoulli"], ["sigma", "bernoulli"]),
    ],
    ids=["typo", "auto", "bernoulli"],
)
def test_refusals_are_one_line(run_cli, extra, words):
    code, _, err = run_cli(["fit", str(EXAMPLE), *ROLES, *extra, *SAMPLER])
    assert code != 0
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and all(w in lines[0] for w in words), err


def test_models_with_their_own_residual_spread_refuse_it(tmp_path, run_cli):
    """Across collections or segments, and with several runs per system: one line each."""
    import pandas as pd

    rng = np.random.default_rng(0)
    cells = [(c, f"{c}{t}", s) for c in "ab" for t in range(12) for s in "xyz"]
    frame = pd.DataFrame(cells, columns=["collection", "topic", "system"])
    frame["score"] = rng.uniform(0.2, 0.6, len(frame))
    frame.to_csv(tmp_path / "collections.csv", index=False)
    one = frame[frame["collection"] == "a"].drop(columns="collection")
    one.to_csv(tmp_path / "one.csv", index=False)
    pd.DataFrame({"topic": one["topic"].unique(), "segment": ["s1", "s2"] * 6}).to_csv(
        tmp_path / "segments.csv", index=False
    )
    runs = pd.concat([one.assign(seed=k) for k in range(3)])
    runs.to_csv(tmp_path / "runs.csv", index=False)
    cases = [
        (["fit", str(tmp_path / "collections.csv"), "--by", "collection"], "across collections"),
        (["fit", str(tmp_path / "runs.csv")], "--sigma-replicate"),
        (["risk", str(tmp_path / "one.csv"), "--segments", str(tmp_path / "segments.csv")],
         "per segment"),
    ]  # fmt: skip
    for argv, words in cases:
        code, _, err = run_cli([*argv, "-c", "x", "-C", "y", "--sigma", "system"])
        lines = [ln for ln in err.strip().splitlines() if ln.startswith("error:")]
        assert code != 0 and len(lines) == 1 and words in lines[0], err
