"""Save a fit to netCDF (with provenance) and load it back identically."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import xarray as xr

from bayes_ir.errors import BayesIRError
from bayes_ir.files import atomic_path, check_output_path
from bayes_ir.hierarchical.adequacy import check_model
from bayes_ir.hierarchical.diagnostics import Thresholds, diagnose
from bayes_ir.hierarchical.model import table_from_observed
from bayes_ir.hierarchical.priors import Priors

__all__ = ["save_fit", "load_fit", "MODELS_DIR"]

#: Default folder of saved fits (relative to the working directory).
MODELS_DIR = Path("models")
_FORMAT = "bayes_ir.HierarchicalFit/1"


def _default_path(fit) -> Path:
    prov = fit.provenance

    def clean(text: str) -> str:
        return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(text))

    name = (
        f"{clean(prov.get('collection'))}_{clean(prov.get('measure'))}_{fit.likelihood}_"
        f"{fit.method}_{str(prov.get('data_hash', ''))[:10]}.nc"
    )
    return MODELS_DIR / name


def save_fit(fit, path: str | Path | None = None) -> Path:
    """Write ``fit`` to a netCDF4 file (h5netcdf engine) and return its path.

    The DataTree groups are written as they are; the root attributes hold the format
    tag, the provenance, the priors, the likelihood, the method, the table's source
    and the diagnostics thresholds, as JSON strings. Roles travel as the ``role``
    coordinate of ``system``. The file is written atomically
    (:func:`bayes_ir.files.atomic_path`): an interrupted or concurrent save never leaves a
    partial file, and the table's input file is never overwritten.
    """
    path = check_output_path(_default_path(fit) if path is None else path, what="saved fit")
    tree = fit.posterior.copy()
    tree.attrs = {
        "bayes_ir_format": _FORMAT,
        "likelihood": fit.likelihood,
        "method": fit.method,
        "provenance": json.dumps(fit.provenance),
        "priors": json.dumps(fit.priors.to_dict()),
        "thresholds": json.dumps(fit.diagnostics.thresholds.__dict__),
        "source": fit.table.source,
    }
    with atomic_path(path, inputs=[fit.table.source], what="saved fit") as tmp:
        tree.to_netcdf(tmp, engine="h5netcdf")
    return path


def load_fit(path: str | Path):
    """Read a fit written by :func:`save_fit`.

    The score table is rebuilt from the ``observed_data`` group (scores, topics,
    systems and the ``role`` coordinate) and the collection/measure in the provenance;
    the diagnostics are recomputed from the draws with the stored thresholds, and the
    model check with the fit's seed (both are deterministic), so the loaded object
    equals the saved one.

    Raises
    ------
    BayesIRError
        The path is missing or a folder, or the file is not a complete saved bayes_ir fit
        (not netCDF, truncated, another netCDF, a damaged group); the message names it.
    """
    path = Path(path)
    if path.is_dir():
        raise BayesIRError(f"{path} is a folder, not a saved fit")
    if not path.is_file():
        raise BayesIRError(f"no saved fit at {path}")
    try:
        with xr.open_datatree(path, engine="h5netcdf") as raw:
            tree = raw.load()
    except Exception as exc:  # h5py/h5netcdf/xarray raise OSError, ValueError, KeyError...
        raise BayesIRError(
            f"{path} is not a readable netCDF file ({_reason(exc)}); was it written by "
            "HierarchicalFit.save, and completely?"
        ) from None
    attrs = dict(tree.attrs)
    if attrs.get("bayes_ir_format") != _FORMAT:
        raise BayesIRError(f"{path} is not a saved bayes_ir HierarchicalFit")
    try:
        return _rebuild(tree, attrs, path)
    except Exception as exc:  # a tag without the groups and attributes that go with it
        raise BayesIRError(
            f"{path} is a damaged saved fit ({_reason(exc)}); save the fit again"
        ) from None


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _rebuild(tree, attrs: dict, path: Path):
    """Return the HierarchicalFit stored in ``tree`` (its root ``attrs`` read already)."""
    from bayes_ir.hierarchical.fit import HierarchicalFit

    tree.attrs = {}
    prov = json.loads(attrs["provenance"])
    obs = tree["observed_data"].to_dataset()["score"]
    table = table_from_observed(
        [str(t) for t in obs["topic"].values],
        [str(s) for s in obs["system"].values],
        [str(r) for r in obs["role"].values],
        np.asarray(obs.values, dtype=float),
        collection=prov["collection"],
        measure=prov["measure"],
        source=attrs.get("source", str(path)),
    )
    thresholds = Thresholds(**json.loads(attrs["thresholds"]))
    fit = HierarchicalFit(
        posterior=tree,
        table=table,
        likelihood=attrs["likelihood"],
        method=attrs["method"],
        priors=Priors(**json.loads(attrs["priors"])),
        diagnostics=diagnose(tree, thresholds=thresholds),
        provenance=prov,
    )
    if not prov.get("model_check", True):
        return fit
    return replace(fit, model_check=check_model(fit, seed=prov.get("seed")))
