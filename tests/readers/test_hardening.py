"""Issue 20, reading side: measure spellings, wide id columns, runs vs qrels, odd inputs.

Every case either loads the right table (checked against the file's own numbers) or
raises a :class:`~bayes_ir.errors.BayesIRError` subclass naming the place.
"""

from __future__ import annotations

import pandas as pd
import pytest

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers import read_scores
from bayes_ir.table import ScoreTable

#: (spelling in the file, canonical label): trec_eval names and ir_measures strings.
SPELLINGS = [
    ("P_10", "P@10"),
    ("ndcg_cut_10", "nDCG@10"),
    ("map", "AP"),
    ("recip_rank", "RR"),
    ("Rprec", "Rprec"),
    ("recall_1000", "R@1000"),
    ("bpref", "Bpref"),
    ("ndcg", "nDCG"),
    ("P@10", "P@10"),
]


def tidy_text(measure: str, bad: float | None = None) -> str:
    rows = ["system,topic,measure,score"]
    for system in ("a", "b"):
        for topic in ("1", "2", "3"):
            rows.append(f"{system},{topic},{measure},0.25")
    if bad is not None:
        rows[-1] = f"b,3,{measure},{bad}"
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize(("spelled", "label"), SPELLINGS)
def test_range_check_fires_for_every_spelling(tmp_path, spelled, label):
    path = tmp_path / "scores.csv"
    path.write_text(tidy_text(spelled, bad=1.5), encoding="utf-8")
    with pytest.raises(ScoreTableError, match=r"scores\.csv:7: score 1\.5 .*range \[0, 1\]"):
        read_scores(path)
    frame = pd.DataFrame({"system": ["a", "b"], "topic": ["1", "1"], "score": [0.5, 1.5]})
    with pytest.raises(ScoreTableError, match="outside the range"):
        ScoreTable.from_frame(frame, measure=spelled)


@pytest.mark.parametrize(("spelled", "label"), SPELLINGS)
def test_label_is_canonical_and_the_spelling_is_noted(tmp_path, spelled, label):
    path = tmp_path / "scores.csv"
    path.write_text(tidy_text(spelled), encoding="utf-8")
    table = read_scores(path)
    assert table.measures == (label,)
    noted = [n for n in table.notes if spelled in n]
    assert bool(noted) == (spelled != label)
    # every spelling selects the same block
    assert table.select(measure=spelled).measures == (label,)
    assert read_scores(path, measure=spelled).measures == (label,)


@pytest.mark.parametrize(("spelled", "label"), SPELLINGS)
def test_wide_and_trec_eval_labels_match(tmp_path, spelled, label):
    wide = tmp_path / "wide.csv"
    wide.write_text("topic,a,b\n1,0.1,0.2\n2,0.3,1.5\n", encoding="utf-8")
    with pytest.raises(ScoreTableError, match=r"wide\.csv:3: score 1\.5"):
        read_scores(wide, measure=spelled)
    wide.write_text("topic,a,b\n1,0.1,0.2\n2,0.3,0.4\n", encoding="utf-8")
    assert read_scores(wide, measure=spelled).measures == (label,)
