r"""Save a fit to compressed netCDF (with provenance) and load it back identically.

What a saved fit stores, and why (:func:`save_fit`):

- ``observed_data``: the scores as read (float64: the data hash is computed on them) with
  the ``role`` coordinate of ``system``;
- ``posterior``: the draws that cannot be recomputed. The exact sampler's ``b0`` and
  effects are drawn from their exact conditional given the three scales with their own
  random stream (:func:`~bayes_ir.hierarchical.exact.effects_given_scales`), so only
  the scales are stored (float64, as drawn) and the effects (float32, as ``fit``
  keeps them) are regenerated on load and checked against a fingerprint stored at
  save time. NUTS draws are stored whole,
  as float32: ``fit`` keeps them at float32 precision (a relative rounding of
  :math:`6 \times 10^{-8}`, four orders of magnitude below the Monte Carlo error of
  any posterior summary of a few thousand draws), so nothing is lost;
- ``sample_stats`` (NUTS): as kept by ``fit`` (float32 precision, booleans, integers);
- not stored: the pointwise log-likelihood (recomputed from the draws on load when the
  fit had it) and posterior predictive draws (``fit.to_arviz()`` simulates them).

Every array is zlib-compressed (shuffle filter). A 50 x 45 fit of the exact sampler
(4 x 10,000 draws) takes about 1 MB instead of 32 MB.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from bayes_ir.errors import BayesIRError
from bayes_ir.files import atomic_path, check_input, check_output_path
from bayes_ir.hierarchical.adequacy import check_model
from bayes_ir.hierarchical.diagnostics import Thresholds, diagnose
from bayes_ir.hierarchical.exact import SCALES, effects_given_scales
from bayes_ir.hierarchical.families import FAMILIES
from bayes_ir.hierarchical.model import Design, design_of, table_from_observed
from bayes_ir.hierarchical.priors import Priors
from bayes_ir.table import ScoreTable

__all__ = ["save_fit", "load_fit", "check_fit", "MODELS_DIR"]

#: Default folder of saved fits (relative to the working directory).
MODELS_DIR = Path("models")
_FORMAT = "bayes_ir.HierarchicalFit/2"
#: Formats :func:`load_fit` reads (version 1: every group as it was, uncompressed).
_READABLE = ("bayes_ir.HierarchicalFit/1", _FORMAT)
_COMPRESSION = {"zlib": True, "complevel": 4, "shuffle": True}
#: Posterior variables of an exact fit regenerated on load from the scales and the seed.
_REGENERATED = ("b0", "topic_effect", "system_effect")


def _default_path(fit) -> Path:
    prov = fit.provenance

    def clean(text: str) -> str:
        return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(text))

    name = (
        f"{clean(prov.get('collection'))}_{clean(prov.get('measure'))}_{fit.likelihood}_"
        f"{fit.method}_{str(prov.get('data_hash', ''))[:10]}.nc"
    )
    return MODELS_DIR / name


def _fingerprint(post: xr.Dataset | dict[str, np.ndarray]) -> dict[str, list[float]]:
    """Sum of squares and last draw of each regenerated variable (checks the regeneration).

    The sum is accumulated in float64 one chain at a time (no float64 copy of the draws).
    """
    out = {}
    for name in _REGENERATED:
        var = post[name]
        x = var.transpose("chain", "draw", ...).values if isinstance(var, xr.DataArray) else var
        total = sum(float(np.square(chain, dtype=np.float64).sum()) for chain in x)
        out[name] = [total, *map(float, x[-1, -1].ravel())]
    return out


def _storage(ds: xr.Dataset) -> tuple[xr.Dataset, dict[str, dict[str, Any]]]:
    """Return the encoding of each array: compressed, float32 when that loses nothing."""
    encoding: dict[str, dict[str, Any]] = {}
    for name, var in ds.data_vars.items():
        enc: dict[str, Any] = dict(_COMPRESSION) if var.ndim else {}
        if var.dtype == np.float64 and np.array_equal(
            var.values.astype(np.float32), var.values, equal_nan=True
        ):
            enc["dtype"] = "float32"
        encoding[str(name)] = enc
    return ds, encoding


def _stored_tree(fit) -> tuple[xr.DataTree, dict[str, dict[str, dict[str, Any]]], dict]:
    """Return the groups written to disk, their encodings and the extra root attributes."""
    groups = {}
    extra: dict[str, Any] = {"log_likelihood": int("log_likelihood" in fit.posterior.children)}
    for name, node in fit.posterior.children.items():
        if name in ("log_likelihood", "posterior_predictive"):
            continue  # recomputed from the draws
        ds = node.to_dataset()
        if name == "posterior" and fit.method == "exact" and set(_REGENERATED) <= set(ds):
            extra["regenerated"] = json.dumps(_fingerprint(ds))
            ds = ds.drop_vars(list(_REGENERATED))
        groups[f"/{name}"] = ds
    encoding = {}
    for path, ds in groups.items():
        groups[path], encoding[path] = _storage(ds)
    return xr.DataTree.from_dict(groups), encoding, extra


def save_fit(fit, path: str | Path | None = None) -> Path:
    """Write ``fit`` to a compressed netCDF4 file (h5netcdf engine) and return its path.

    See the module docstring for what is stored. The root attributes hold the format
    tag, the provenance (with the data hash: SHA-256 of the topics, systems, roles and
    scores), the priors, the likelihood, the method, the table's source and the
    diagnostics thresholds, as JSON strings; roles travel as the ``role`` coordinate of
    ``system`` in ``observed_data``. The file is written atomically
    (:func:`bayes_ir.files.atomic_path`): an interrupted or concurrent save never leaves a
    partial file, and the table's input file is never overwritten.
    """
    path = check_output_path(_default_path(fit) if path is None else path, what="saved fit")
    tree, encoding, extra = _stored_tree(fit)
    tree.attrs = {
        "bayes_ir_format": _FORMAT,
        "likelihood": fit.likelihood,
        "method": fit.method,
        "data_hash": str(fit.provenance.get("data_hash", "")),
        "provenance": json.dumps(fit.provenance),
        "priors": json.dumps(fit.priors.to_dict()),
        "thresholds": json.dumps(fit.diagnostics.thresholds.__dict__),
        "source": fit.table.source,
        **extra,
    }
    with atomic_path(path, inputs=[fit.table.source], what="saved fit") as tmp:
        tree.to_netcdf(tmp, engine="h5netcdf", encoding=encoding)
    return path


def load_fit(path: str | Path, table: ScoreTable | None = None):
    """Read a fit written by :func:`save_fit`; with ``table``, check that it is that table's fit.

    Parameters
    ----------
    path
        The saved fit.
    table
        The :class:`~bayes_ir.table.ScoreTable` (with roles) the fit is to be used
        with. The fit is returned only if it was made on exactly this data: the same
        collection and measure, topics, systems, champion, challengers and artifacts,
        and scores (its data hash, stored at save time); the returned fit then holds
        ``table``, and contrasts, risk, decisions and reviews of it equal those of a
        fresh fit. ``None``: the table is rebuilt from the stored scores.

    Returns
    -------
    HierarchicalFit
        Diagnostics are recomputed from the draws with the stored thresholds and the
        model check with the fit's seed (both are deterministic), so the loaded object
        equals the saved one.

    Raises
    ------
    BayesIRError
        One line naming the file: the path is missing, a folder or not a regular file;
        the file is not a complete saved bayes_ir fit (not netCDF, truncated, another
        netCDF, a damaged group); it was saved by a newer version (a later format, a
        likelihood or sampler this version does not know); or it does not match
        ``table`` (saying what differs).
    """
    path = check_input(path, what="saved fit")  # a FIFO or device is refused unopened
    try:
        with xr.open_datatree(path, engine="h5netcdf") as raw:
            tree = raw.load()
    except Exception as exc:  # h5py/h5netcdf/xarray raise OSError, ValueError, KeyError...
        raise BayesIRError(
            f"{path} is not a readable netCDF file ({_reason(exc)}); was it written by "
            "HierarchicalFit.save, and completely?"
        ) from None
    attrs = dict(tree.attrs)
    _check_format(path, attrs)
    try:
        stored = _stored_table(tree, attrs, path)
    except Exception as exc:  # a tag without the groups and attributes that go with it
        raise BayesIRError(
            f"{path} is a damaged saved fit ({_reason(exc)}); save the fit again"
        ) from None
    if table is not None:
        _check_match(path, stored, table, json.loads(attrs["provenance"])["data_hash"])
    try:
        return _rebuild(tree, attrs, path, stored if table is None else table)
    except BayesIRError:
        raise
    except Exception as exc:
        raise BayesIRError(
            f"{path} is a damaged saved fit ({_reason(exc)}); save the fit again"
        ) from None


#: What a saved fit may hold: the likelihoods, samplers and residual SDs this version fits.
_KNOWN = {"likelihood": tuple(FAMILIES), "method": ("exact", "gibbs", "nuts"),
          "sigma": ("pooled", "system")}  # fmt: skip


def _check_format(path: Path, attrs: dict) -> None:
    """Refuse a file that is not a saved fit, or one this version cannot read right.

    A format tag of a later version (``bayes_ir.HierarchicalFit/3``) or a likelihood,
    sampler or residual-SD structure this version does not know would be read as
    something else without a word: each is refused, naming the file and what it holds.
    """
    tag = str(attrs.get("bayes_ir_format", ""))
    if tag not in _READABLE:
        version = re.fullmatch(r"bayes_ir\.HierarchicalFit/(\d+)", tag)
        if version and int(version[1]) > int(_FORMAT.rsplit("/", 1)[1]):
            raise BayesIRError(
                f"{path} was saved by a newer bayes_ir (saved-fit format {version[1]}; this "
                f"version reads formats up to {_FORMAT.rsplit('/', 1)[1]}): upgrade bayes_ir, "
                "or refit with this version"
            )
        raise BayesIRError(f"{path} is not a saved bayes_ir HierarchicalFit")
    try:
        settings = {"sigma": json.loads(attrs["provenance"]).get("sigma", "pooled"),
                    "likelihood": attrs["likelihood"], "method": attrs["method"]}  # fmt: skip
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BayesIRError(
            f"{path} is a damaged saved fit ({_reason(exc)}); save the fit again"
        ) from None
    for key, value in settings.items():
        if value not in _KNOWN[key]:
            raise BayesIRError(
                f"{path} holds a fit with {key} {value!r}, which this version of bayes_ir "
                f"does not know ({', '.join(_KNOWN[key])}): was it saved by a newer version? "
                "Upgrade bayes_ir, or refit"
            )


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _stored_table(tree: xr.DataTree, attrs: dict, path: Path) -> ScoreTable:
    """Rebuild the fitted table from ``observed_data`` and check it against its hash."""
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
    if design_of(table).data_hash() != prov["data_hash"]:
        raise ValueError("its observed scores do not match its data hash")
    return table


def _names(items: list[str], limit: int = 3) -> str:
    shown = ", ".join(repr(x) for x in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _difference(fitted: Design, given: Design) -> str:
    """Say in a few words how ``given`` differs from the design the fit was made on."""
    for what in ("collection", "measure"):
        a, b = getattr(fitted, what), getattr(given, what)
        if a != b:
            return f"it was fitted on {what} {a!r}, the table has {b!r}"
    for what in ("topics", "systems"):
        a, b = getattr(fitted, what), getattr(given, what)
        only_fit = [x for x in a if x not in set(b)]
        only_table = [x for x in b if x not in set(a)]
        parts = [f"in the fit only: {_names(only_fit)}"] if only_fit else []
        parts += [f"in the table only: {_names(only_table)}"] if only_table else []
        if parts:
            return f"{what} differ ({len(a)} in the fit, {len(b)} in the table; {'; '.join(parts)})"
    roles_fit, roles_table = (
        dict(zip(fitted.systems, fitted.roles, strict=True)),
        dict(zip(given.systems, given.roles, strict=True)),
    )
    for role in ("champion", "challenger", "artifact"):
        a = [s for s in fitted.systems if roles_fit[s] == role]
        b = [s for s in given.systems if roles_table[s] == role]
        if set(a) != set(b):
            return (
                f"roles differ: {role}s {_names(a) or 'none'} in the fit, "
                f"{_names(b) or 'none'} in the table"
            )
    if fitted.topics != given.topics or fitted.systems != given.systems:
        return "the same data in another order of topics or systems: refit"
    differ = ~((fitted.matrix == given.matrix) | (np.isnan(fitted.matrix) & np.isnan(given.matrix)))
    t, s = (int(i[0]) for i in np.nonzero(differ))
    return (
        f"{int(differ.sum())} of {differ.size} scores differ (first: topic "
        f"{fitted.topics[t]!r}, system {fitted.systems[s]!r}: {fitted.matrix[t, s]:.6g} in "
        f"the fit, {given.matrix[t, s]:.6g} in the table)"
    )


def _check_match(name: object, stored: ScoreTable, table: ScoreTable, data_hash: str) -> None:
    """Raise one line naming ``name`` and what differs unless ``table`` is the fit's data."""
    given = design_of(table)
    if given.data_hash() == data_hash:
        fitted = design_of(stored)
        if (fitted.collection, fitted.measure) == (given.collection, given.measure):
            return
    raise BayesIRError(
        f"{name} is not a fit of {table.source}: {_difference(design_of(stored), given)}; "
        "refit instead of reusing the saved fit"
    )


def check_fit(fit: Any, table: ScoreTable, *, name: str = "the given fit") -> None:
    """Check that ``fit`` (a :class:`~bayes_ir.hierarchical.HierarchicalFit`) is a fit of ``table``.

    The same check as :func:`load_fit` with a table: the same collection and measure,
    topics, systems, champion, challengers and artifacts, and scores (the data hash of
    the fit's provenance against that of ``table``).

    Raises
    ------
    BayesIRError
        One line naming ``name`` and what differs.
    """
    _check_match(name, fit.table, table, str(fit.provenance.get("data_hash", "")))


def _posterior(
    tree: xr.DataTree, attrs: dict, design: Design, priors: Priors, seed: int, pooling: str
):
    """Return the draws as ``fit`` made them (an exact fit's effects regenerated).

    ``pooling`` is the fit's (its provenance; ``"all"`` in files written before it was
    recorded).

    Float64, but for the exact sampler's effects, which are float32
    (:func:`~bayes_ir.hierarchical.exact.draw_effects`).
    """
    post = tree["posterior"].to_dataset().drop_vars("role", errors="ignore")
    exact = attrs.get("method") == "exact"
    post = post.map(
        lambda v: (
            v.astype(np.float32 if exact and v.name in _REGENERATED[1:] else np.float64)
            if v.dtype.kind == "f"
            else v
        )
    )
    if "regenerated" not in attrs:
        return post
    scales = {name: post[name].transpose("chain", "draw").values for name in SCALES}
    effects = effects_given_scales(
        scales, design.matrix, priors, seed=seed, pooled=design.pooled(pooling)
    )
    draws = {**effects, **{str(name): post[name].values for name in post.data_vars}}
    expected = json.loads(attrs["regenerated"])
    got = _fingerprint(effects)
    for name, want in expected.items():
        # float32 precision: files saved before the effects were kept as float32
        if not np.allclose(got[name], want, rtol=1e-6, atol=0):
            raise BayesIRError(
                f"the draws of {name} regenerated from the saved scales differ from those "
                "of the saved fit (another numpy random stream?); refit"
            )
    return draws


def _rebuild(tree: xr.DataTree, attrs: dict, path: Path, table: ScoreTable):
    """Return the HierarchicalFit stored in ``tree`` (its root ``attrs`` read already)."""
    from bayes_ir.hierarchical.fit import (
        HierarchicalFit,
        assemble_datatree,
        log_likelihood_draws,
    )

    prov = json.loads(attrs["provenance"])
    priors = Priors(**json.loads(attrs["priors"]))
    design = design_of(table)
    try:
        post = _posterior(tree, attrs, design, priors, prov["seed"], prov.get("pooling", "all"))
    except BayesIRError as exc:
        raise BayesIRError(f"{path}: {exc}") from None
    stats = tree["sample_stats"].to_dataset() if "sample_stats" in tree.children else None
    if stats is not None:
        stats = stats.map(lambda v: v.astype(np.float64) if v.dtype.kind == "f" else v)
    ll = None
    if "log_likelihood" in tree.children:  # format 1 stored it
        ll = tree["log_likelihood"].to_dataset()["score"]
    elif int(attrs.get("log_likelihood", 0)):
        posterior = assemble_datatree(post, design, sample_stats=None)["posterior"]
        family = prov.get("family", attrs["likelihood"])
        ll = log_likelihood_draws(posterior.to_dataset(), design, family)
    tree = assemble_datatree(post, design, sample_stats=stats, log_likelihood=ll)
    thresholds = Thresholds(**json.loads(attrs["thresholds"]))
    fit = HierarchicalFit(
        posterior=tree,
        table=table,
        likelihood=attrs["likelihood"],
        method=attrs["method"],
        priors=priors,
        diagnostics=diagnose(tree, thresholds=thresholds),
        provenance=prov,
    )
    if not prov.get("model_check", True):
        return fit
    return replace(fit, model_check=check_model(fit, seed=prov.get("seed")))
