"""``iotune fit`` and ``iotune predict``: thin commands over :mod:`iotune.model`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from iotune.cli.common import force_option, in_use
from iotune.cli.numbers import SEED, BoundedInt, FiniteFloat
from iotune.errors import DataError
from iotune.execution.outputs import InUse, check_output_file, write_output
from iotune.inputs import check_regular, read_csv
from iotune.model import Model, fit_model, load_model, model_to_dict, save_model
from iotune.model.fit import CV_FOLDS, MAX_TERMS, MIN_GAIN
from iotune.model.io import dump_yaml
from iotune.ui.output import progress, render_pairs, render_table, to_plain

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd


def _names(value: str | None) -> list[str] | None:
    """``"c, s,a"`` into ``["c", "s", "a"]``; ``None`` stays ``None``."""
    if value is None:
        return None
    return [name.strip() for name in value.split(",") if name.strip()]


def _data_in_use(data: Path) -> InUse:
    """What ``fit`` reads: DATA (a store with its side files, or a CSV) and the config."""
    if _is_store(data):
        return in_use(None, store=data)
    return in_use(None, inputs={"the data": data})


def _is_store(path: Path) -> bool:
    return path.suffix == ".jsonl" or (path / "measurements.jsonl").is_file()


def read_data(path: Path) -> pd.DataFrame:
    """A CSV or Parquet file (by suffix), or an iotune store (``*.jsonl`` or a directory
    with measurements.jsonl)."""
    import pandas as pd

    if _is_store(path):
        from iotune.store.index import read_dataframe

        return read_dataframe(path)
    if path.is_dir():
        raise DataError(f"{path}: a directory but not an iotune store (no measurements.jsonl)")
    if path.suffix == ".parquet":
        check_regular(path, "Parquet file", DataError)
        try:
            return pd.read_parquet(path)
        except ImportError:
            raise DataError(f"{path}: reading Parquet needs pyarrow "
                            "(pip install 'iotune[parquet]')") from None
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: cannot read as Parquet ({exc})") from exc
    return read_csv(path)


def skip_default_runs(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` without the runs of the default configuration, which cannot be fitted on.

    A default run sets no setting, so its setting columns are empty. The settings among
    ``columns`` (names of the settings catalogue or ``hint.*``; ``cores`` and other
    columns are not settings) decide: a row with none of them is dropped, and one note on
    stderr says how many were and why. A row with some of them but not all is bad data, not
    a default run: DataError naming the first empty column and the row (the frame's index
    label, i.e. the 0-based data row of a file). Without settings among ``columns``, the
    frame is returned as it is.
    """
    settings = [c for c in dict.fromkeys(columns) if c in frame.columns and _is_setting(c)]
    if not settings:
        return frame
    missing = frame[settings].isna()
    partial = missing.any(axis=1) & ~missing.all(axis=1)
    if partial.any():
        row = partial.idxmax()
        column = next(c for c in settings if missing.at[row, c])
        given = ", ".join(c for c in settings if not missing.at[row, c])
        raise DataError(f"column {column!r}: missing value at row {row}, which sets {given} "
                        "(only rows that set none of the settings, runs of the default "
                        "configuration, are skipped); give the value or drop the row")
    default = missing.all(axis=1)
    if default.all():
        raise DataError(f"no row sets any of {', '.join(settings)}: all {len(frame)} are runs "
                        "of the default configuration; there is nothing to fit")
    if default.any():
        progress(f"iotune: fitting {len(frame) - int(default.sum())} of {len(frame)} rows: "
                 f"skipped {int(default.sum())} that set none of {', '.join(settings)} (runs "
                 "of the default configuration)")
    return frame[~default]


def _is_setting(name: str) -> bool:
    from iotune.settings.values import HINT_PREFIX, SETTINGS

    return name in SETTINGS or name.startswith(HINT_PREFIX)


def _report(model: Model, data: dict[str, Any]) -> str:
    """The table format: selection steps, then the formula and the fit statistics."""
    n = model.stats.rows if model.stats else 0
    rows = [{
        "step": k,
        "term": step.term.name(model.params),
        "relative_error": step.relative_error,
        "rms_relative_error": (step.relative_error / n) ** 0.5 if n else None,
        "cv_error": step.cv_error,
        "added_by": "completion" if step.by_completion else "selection",
    } for k, step in enumerate(model.steps, start=1)]
    fit = data.get("fit") or {}
    pairs: dict[str, Any] = {"formula": model.formula()}
    pairs.update({key: fit.get(key) for key in (
        "rows", "configurations", "relative_error", "rms_relative_error",
        "cv_relative_error", "cv_rms_relative_error", "cv_folds", "stop_reason")})
    pairs["completion"] = "; ".join(
        f"{c['parameter']}{_where(c)}: {c['status']}" + (f" ({c['term']})" if "term" in c else "")
        for c in data["completion"]) or "none (no actionable parameters)"
    return render_table(rows) + "\n\n" + render_pairs(pairs)


def _where(entry: dict[str, Any]) -> str:
    where = entry.get("where") or {}
    return "".join(f" [{k}={v}]" for k, v in where.items())


@click.command("fit")
@click.argument("data", type=click.Path(exists=True, path_type=Path))
@click.option("--params", required=True,
              help="Comma-separated numeric parameter columns, e.g. c,s,a,f.")
@click.option("--target", required=True, help="Column to model, e.g. write_time (positive).")
@click.option("--max-terms", type=BoundedInt(1), default=MAX_TERMS, show_default=True,
              help="Terms chosen by greedy selection (completion may add more).")
@click.option("--actionable", default=None,
              help="Comma-separated parameters the tuner can set (default: all --params); "
                   "monotonicity completion considers these only.")
@click.option("--categorical", default=None,
              help="Comma-separated categorical columns (e.g. romio_cb_write); modelled "
                   "with per-level indicator terms.")
@click.option("--no-monotone-completion", is_flag=True,
              help="Do not add opposite-exponent terms to a basis monotone in a parameter.")
@click.option("--stop", type=click.Choice(["terms", "threshold", "cv"]), default="terms",
              show_default=True,
              help="terms: stop at --max-terms (the paper); threshold: also stop when the "
                   "next term lowers the relative error by less than --min-gain; cv: also "
                   "stop when it lowers the cross-validated error by less than that.")
@click.option("--min-gain", type=FiniteFloat(0, 1, max_open=True), default=MIN_GAIN,
              show_default=True, help="Fractional gain a term needs under --stop threshold|cv.")
@click.option("--cv-folds", type=BoundedInt(2), default=CV_FOLDS, show_default=True)
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the CV folds.")
@click.option("-o", "--output", type=click.Path(path_type=Path),
              help="Write the model file (YAML) here (replaces an earlier model, never DATA).")
@force_option
@click.option("--format", "fmt", type=click.Choice(["table", "json", "yaml"]), default="table",
              show_default=True, help="Output format on stdout.")
def fit_command(data: Path, params: str, target: str, max_terms: int, actionable: str | None,
                categorical: str | None, no_monotone_completion: bool, stop: str,
                min_gain: float, cv_folds: int, seed: int, output: Path | None,
                force: bool, fmt: str) -> None:
    """Fit the empirical performance model to DATA (a CSV file or an iotune store).

    Prints the terms in the order they were selected with the relative error
    sum(((m - y)/y)^2) after each, the formula and the fit statistics.
    """
    guard = _data_in_use(data)
    if output is not None:
        check_output_file(output, "model", option="-o", in_use=guard, force=force)
    names = _names(params) or []
    frame = skip_default_runs(read_data(data), [*names, *(_names(categorical) or [])])
    model = fit_model(frame, names, target, max_terms=max_terms,
                      actionable=_names(actionable), categorical=_names(categorical),
                      monotone_completion=not no_monotone_completion, stop=stop,
                      min_gain=min_gain, cv_folds=cv_folds, seed=seed)
    source = data / "measurements.jsonl" if data.is_dir() else data
    as_dict = model_to_dict(model, source=source)
    if output is not None:
        save_model(model, output, source=source, in_use=guard, force=force)
        progress(f"iotune: wrote model to {output}")
    if fmt == "json":
        click.echo(json.dumps(to_plain(as_dict), indent=2))
    elif fmt == "yaml":
        click.echo(dump_yaml(as_dict).rstrip())
    else:
        click.echo(_report(model, as_dict))


@click.command("predict")
@click.argument("model_path", metavar="MODEL",
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("data", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path),
              help="Write the CSV here instead of stdout (replaces an earlier CSV, never "
                   "MODEL or DATA).")
@force_option
def predict_command(model_path: Path, data: Path, output: Path | None, force: bool) -> None:
    """Predict MODEL's target for every row of DATA.csv.

    Writes DATA with an added 'predicted' column (full precision) to stdout or -o.
    """
    guard = in_use(None, inputs={"the model": model_path, "the data": data})
    if output is not None:
        check_output_file(output, "csv", option="-o", in_use=guard, force=force)
    model = load_model(model_path)
    frame = read_data(data)
    frame["predicted"] = model.predict(frame)
    if output is None:
        click.echo(frame.to_csv(index=False), nl=False)
    else:
        write_output(output, lambda tmp: frame.to_csv(tmp, index=False), "csv", option="-o",
                     in_use=guard, force=force)
        progress(f"iotune: wrote {len(frame)} predictions to {output}")


COMMANDS = [fit_command, predict_command]
