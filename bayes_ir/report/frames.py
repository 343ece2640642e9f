"""A result's frame made ready for any output format: index as columns, counts as integers."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["plain_frame"]


def plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with a named index as leading columns and counts as integers.

    Float columns holding only whole numbers and NaN (pandas turns an integer column
    with an empty cell, the ``n`` of a pooled row, into floats) become nullable integers.
    """
    named = any(name is not None for name in frame.index.names)
    out = frame.reset_index(drop=not named)
    for col in out.columns:
        values = out[col]
        if not pd.api.types.is_float_dtype(values) or not values.isna().any():
            continue
        known = values.dropna().to_numpy()
        if len(known) and np.isfinite(known).all() and (known == np.round(known)).all():
            out[col] = values.astype("Int64")
    return out
