"""The ``train-audit`` command line: parse options, call the library, write output, choose the exit code.

Exit codes: 0 no claim reaches the fail level; 1 one does; 2 unusable input or a usage error.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Callable, Iterable, NoReturn

import click

# numpy asks the kernel for transparent huge pages (madvise) on every large array; where the kernel then compacts
# memory to find one at the page fault (THP defrag "madvise", a common default), a batch audit spent more time in the
# kernel than in its own arithmetic (300,000 claims, Parquet to Parquet, on the 2-core machine of bench/scale.py:
# 5.4 s of system time with them, 1.3-2.3 s without; wall 17-19 s → 11-14 s). The command line does without them
# unless the user chose (NUMPY_MADVISE_HUGEPAGE set); numpy reads the setting when it is first imported, which the
# command line does later. The library leaves the process as it finds it.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
#: Interrupted (Ctrl-C): 128 + SIGINT, as shells report it; never 0 or 1, which are verdicts.
EXIT_INTERRUPTED = 130
#: Terminated (SIGTERM, as a job runner or ``timeout`` sends): 128 + SIGTERM.
EXIT_TERMINATED = 143
#: Worker processes ``check`` starts by default (one per core, at most this many): each holds pandas and its
#: batch, so that a machine with many cores does not fill its memory unasked.
DEFAULT_MAX_JOBS = 4


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like an interrupt: a write in progress removes its temporary file, nothing is half-done."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def _silence_stdout() -> None:
    """Point stdout at /dev/null so Python's final flush does not raise again on a closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (in-process test runner)
        pass


class AuditUsageError(click.ClickException):
    """An error the user can fix: printed as one line, exit code 2."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"train-audit: error: {self.format_message()}", err=True)


def _use_color(stream: Any) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def _styler(color: bool) -> Callable[[str, str], str]:
    if not color:
        return lambda text, _c: text
    return lambda text, c: click.style(text, bold=True) if c == "bold" else click.style(text, fg=c)


def write_output(data: str | bytes | Iterable[str], output: str | None, inputs: tuple[str, ...] = ()) -> None:
    """Write to stdout (``None`` or ``-``) or atomically to a file: a temporary file in the same folder,
    flushed to disk, then renamed into place, so an interrupted run never leaves half a report and a failed one
    leaves the previous file as it was. Refuses to overwrite an input. ``data`` may be text in pieces (the JSON
    report of a large audit, made a chunk of claims at a time), written as they come."""
    if output in (None, "-"):
        _write_stdout(data)
        return
    _check_target(output, "-o", inputs)
    try:
        _write_file(data, output)
    except OSError as exc:  # no space left, permission denied, a read-only file system, ...
        from audit.reading.paths import os_error

        raise AuditUsageError(f"cannot write {output}: {os_error(exc)}") from None


def _pieces(data: str | bytes | Iterable[str]) -> Iterable[str | bytes]:
    return (data,) if isinstance(data, (str, bytes)) else data


def _write_stdout(data: str | bytes | Iterable[str]) -> None:
    """The report on standard output; a closed or failing standard output is an error (exit 2), never a silent
    loss of the report with exit 0. A reader that went away (a broken pipe) ends the run quietly."""
    stream = sys.stdout
    if stream is None:
        raise AuditUsageError("cannot write the report: standard output is closed")
    try:
        buffer = getattr(stream, "buffer", None)
        if isinstance(data, bytes):
            stream.buffer.write(data)
            stream.buffer.flush()
        elif buffer is not None:
            # UTF-8 whatever the locale, as files are written: a runner whose standard output is cp1252 (Windows)
            # or Latin-1 could not hold the reports' "·", "≤" and "×" (it said "standard output is closed"), and
            # GitHub, SARIF and JSON readers expect UTF-8.
            stream.flush()
            for piece in _pieces(data):
                buffer.write(piece.encode("utf-8"))
            buffer.flush()
        else:
            for piece in _pieces(data):
                click.echo(piece, nl=False)
            stream.flush()
    except BrokenPipeError:
        raise
    except UnicodeEncodeError as exc:
        raise AuditUsageError(f"cannot write the report to standard output: its encoding ({exc.encoding}) cannot "
                              f"hold it; write it to a file with -o, or set PYTHONIOENCODING=utf-8") from None
    except OSError as exc:
        from audit.reading.paths import os_error

        _silence_stdout()
        raise AuditUsageError(f"cannot write the report to standard output: {os_error(exc)}") from None
    except ValueError:  # the stream was closed
        raise AuditUsageError("cannot write the report: standard output is closed") from None


def _write_file(data: str | bytes | Iterable[str], output: str) -> None:
    target = Path(output)
    if target.exists() and not target.is_file():
        # /dev/null, a named pipe, /dev/stdout: written in place. Renaming a file over them would replace the
        # device itself (as root, -o /dev/null would leave a regular file there).
        with open(target, "wb") as fh:
            for piece in _pieces(data):
                fh.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
        return
    parent = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            for piece in _pieces(data):
                fh.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp makes the file private (0600); a report gets the mode a new file would get (umask), or
        # keeps the mode of the file it replaces.
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def _check_target(output: str, option: str, inputs: tuple[str, ...] | list[str]) -> None:
    """Refuse an output path that is one of the inputs, a folder, or in a folder that does not exist."""
    for p in inputs:
        if p != "-" and _same_file(p, output):
            raise AuditUsageError(f"{option} {output} is one of the inputs; refusing to overwrite it")
    target = Path(output)
    try:
        if target.is_dir() or output.endswith(("/", os.sep)):
            raise AuditUsageError(f"{option} {output} is a folder; give a file name")
        parent = target.parent if str(target.parent) else Path(".")
        if not parent.is_dir():
            raise AuditUsageError(f"{option} {output}: folder {parent} does not exist")
    except OSError as exc:  # a name too long, a link loop on the way
        from audit.reading.paths import os_error

        raise AuditUsageError(f"cannot write {output}: {os_error(exc)}") from None


#: Formats a file's extension names: a report written under another format's extension is refused (``-f csv -o
#: runs.parquet`` wrote CSV text into a .parquet file).
_EXTENSION_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".json": "json", ".html": "html",
                      ".htm": "html", ".md": "markdown"}


def _regular_target(path: str) -> bool:
    """Whether a path is (or would be) a regular file: not /dev/null, a pipe or /dev/stdout."""
    return not os.path.exists(path) or os.path.isfile(path)


def _format_of_output(fmt: str, output: str | None) -> str:
    """The report's format: ``--format`` when given (on the command line or in settings), else the one ``-o``'s
    extension names (``-o audit.json`` wrote the text report into a file named .json), else text."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    if ctx.get_parameter_source("fmt") != ParameterSource.DEFAULT or output in (None, "-"):
        return fmt
    return _named_format(output) or fmt


def _named_format(path: str) -> str | None:
    """The format a file's extension names (``.json``: json), or None."""
    return _EXTENSION_FORMATS.get(os.path.splitext(path)[1].lower())


def _check_targets(output: str | None, findings_path: str | None, inputs: list[str],
                   fmt: str | None = None) -> None:
    """Check every output path before any work, so a refused run writes nothing at all."""
    if fmt == "html":
        from audit.report.html import source_date

        try:
            source_date()
        except ValueError as exc:  # a malformed SOURCE_DATE_EPOCH: stop, as reproducible-builds.org asks
            raise AuditUsageError(str(exc)) from None
    if output not in (None, "-"):
        _check_target(output, "-o", inputs)
        named = _named_format(output)
        if fmt in _EXTENSION_FORMATS.values() and named not in (None, fmt) and _regular_target(output):
            raise AuditUsageError(f"-o {output} names a {named} file, but --format is {fmt}; give --format {named} "
                                  f"or another file name")
    if findings_path:
        if findings_path == "-":
            raise AuditUsageError("--findings needs a file name (.csv or .parquet)")
        _check_target(findings_path, "--findings", inputs)
        if os.path.splitext(findings_path)[1].lower() not in (".csv", ".parquet", ".pq") and \
                _regular_target(findings_path):
            raise AuditUsageError(f"--findings {findings_path}: the findings are written as CSV or Parquet, chosen "
                                  f"by the file's extension (.csv, .parquet)")
        if output not in (None, "-") and (_same_file(output, findings_path)
                                           or os.path.realpath(output) == os.path.realpath(findings_path)):
            raise AuditUsageError(f"-o and --findings name the same file ({output}); give two file names")


def _parse_tolerances(values: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    for item in values:
        try:
            code, spec = item.split("=", 1)
            ok, warn = (float(x) for x in spec.split(":", 1))
        except ValueError:
            raise AuditUsageError(f"--tolerance {item!r}: expected CODE=OK:WARN, e.g. C001=1.25:2") from None
        if not (1 <= ok <= warn):
            raise AuditUsageError(f"--tolerance {item!r}: need 1 <= OK <= WARN (factors, e.g. 1.25:2)")
        out[code.strip().upper()] = (ok, warn)
    return out


def _parse_band(band: str) -> tuple[float, float]:
    """``LOW:HIGH`` as fractions (``0.15:0.65``) or percentages (``15:65``, ``15%:65%``), both the same way: a
    band that mixes them (``0.15:65``) is refused, saying how each side was read."""
    try:
        texts = [x.strip() for x in band.split(":", 1)]
        if len(texts) != 2:
            raise ValueError
        numbers = [float(t.rstrip("%").strip()) for t in texts]
    except ValueError:
        raise AuditUsageError(f"--band {band!r}: expected LOW:HIGH, e.g. 0.15:0.65 or 15:65") from None
    if not all(math.isfinite(x) for x in numbers):
        raise AuditUsageError(f"--band {band!r}: LOW and HIGH must be finite numbers, e.g. 0.15:0.65")
    percent = [t.endswith("%") or x > 1 for t, x in zip(texts, numbers)]
    if percent[0] != percent[1]:
        said = " and ".join(f"{t} as {'a percentage' if p else 'a fraction'}" for t, p in zip(texts, percent))
        raise AuditUsageError(f"--band {band!r}: read {said}; write both as fractions (0.15:0.65) or both as "
                              f"percentages (15:65)")
    low, high = (x / 100 for x in numbers) if percent[0] else numbers
    if not 0 <= low < high <= 1:
        raise AuditUsageError(f"--band {band!r}: need 0 <= LOW < HIGH <= 1 (or 0 <= LOW < HIGH <= 100 %)")
    return low, high


def _config(tolerance: tuple[str, ...] = (), band: str | None = None, bytes_per_param: float | None = None,
            convention: str = "auto", causal_halving: bool = False):
    from audit.config import Config

    config = Config.default()
    config.convention = convention
    config.causal_halving = causal_halving
    for code, pair in _parse_tolerances(tolerance).items():
        if code.endswith("-GOODPUT"):  # the wider factors of a stated steady-state figure (C003-goodput=1.25:2)
            if code[:-8] not in config.goodput:
                raise AuditUsageError(f"--tolerance: {code[:-8]} has no goodput side "
                                      f"({', '.join(c + '-goodput' for c in config.goodput)})")
            config.goodput[code[:-8]] = pair
            continue
        if code not in config.tolerances:
            raise AuditUsageError(f"--tolerance: {code} is not a relation rule ({', '.join(config.tolerances)})")
        config.tolerances[code] = pair
    if band:
        config.band = _parse_band(band)
    if bytes_per_param is not None:
        if not math.isfinite(bytes_per_param) or bytes_per_param <= 0:
            raise AuditUsageError(f"--bytes-per-param {bytes_per_param!r}: need a positive number, e.g. 16")
        config.bytes_per_param = bytes_per_param
    return config


def _with_settings_lists(**given: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Lists that add to the settings file's rather than replace them, as ruff's ``--extend-select`` and
    ``--ignore`` do: ``--tolerance C002=2:4`` on the command line left the file's C001 tolerance out (a CI gate
    silently loosened), and ``--ignore R001`` brought back the C001 the file ignored. The file's items come first,
    so the command line's win where both name one rule (``--tolerance``)."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    defaults = ctx.default_map or {}
    out = []
    for name, values in given.items():
        if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE and defaults.get(name):
            values = (*defaults[name], *values)
        out.append(tuple(values))
    return tuple(out)


def _fail_on(value: str) -> str:
    from audit.findings import fail_levels

    try:
        fail_levels(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--fail-on'") from None
    return value


class _LazyChoice(click.Choice):
    """A choice whose values come from the library when first needed (help or validation), so that starting
    the command line imports neither the renderers nor numpy."""

    def __init__(self, values: Callable[[], Any]) -> None:
        self._values = values
        super().__init__([])

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return tuple(self._values())

    @choices.setter
    def choices(self, _value: Any) -> None:  # click.Choice.__init__ assigns; the values stay lazy
        pass


def _formats() -> list[str]:
    from audit import report

    return report.names()  # the names only: the chosen renderer alone is imported, when it renders


def _conventions() -> tuple[str, ...]:
    from audit.flops import CHOICES

    return CHOICES


class _Group(click.Group):
    """Turns any unexpected exception into one line and exit code 2 (``--debug`` shows the traceback)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Terminated:
            click.echo("train-audit: terminated", err=True)
            ctx.exit(EXIT_TERMINATED)
        except KeyboardInterrupt:
            # Not exit 1 ("a claim failed") as click would make it: an interrupted run has no verdict.
            click.echo("train-audit: interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            # The reader went away (``train-audit check | head``): nothing more to say, and nowhere to say it.
            _silence_stdout()
            ctx.exit(EXIT_USAGE)
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except Exception as exc:  # the library's own errors are handled in the commands; this is a bug
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            raise AuditUsageError(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details; "
                                  f"please report it)") from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
# The version from the installed package's metadata (importlib.metadata, read only when asked).
@click.version_option(package_name="train-audit", prog_name="train-audit")
@click.option("--debug", is_flag=True, help="Show a traceback on internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Check the arithmetic of ML training reports: parameters, tokens, FLOPs, accelerators, GPU-hours, MFU."""
    ctx.obj = {"debug": debug}
    # SIGTERM is an interrupt: a report being written is removed, not left half-done as a temporary file.
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):  # not the main thread (an embedding application): leave its handler alone
        return
    ctx.call_on_close(lambda: signal.signal(signal.SIGTERM, previous))


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(dir_okay=True, allow_dash=True))
@click.option("-f", "--format", "fmt", type=_LazyChoice(_formats),
              default="text", show_default=True, help="Output format.")
@click.option("-o", "--output", default=None, help="Write to this file ('-' or omitted: standard output).")
@click.option("--fail-on", default="fail", show_default=True, metavar="LEVEL[,unchecked]",
              callback=lambda _c, _p, v: _fail_on(v),
              help="Exit 1 when a claim reaches this status: warn (or warning), fail (or error) or never (invalid "
                   "counts as fail); "
                   "add ',unchecked' to fail on claims where nothing could be checked ('unchecked' alone: "
                   "'fail,unchecked').")
@click.option("--findings", "findings_path", default=None,
              help="Also write one row per finding to this file (.csv or .parquet).")
@click.option("--tolerance", multiple=True, metavar="CODE=OK:WARN",
              help="Override a relation's tolerance factors, e.g. C001=1.25:2, or the wider ones of its goodput "
                   "side (a stated steady-state MFU above the end-to-end one), e.g. C003-goodput=1.25:2 "
                   "(repeatable).")
@click.option("--band", default=None, metavar="LOW:HIGH", help="Plausible utilization band (default 0.15:0.65).")
@click.option("--bytes-per-param", type=float, default=None, help="Training-state bytes per parameter (default 16).")
@click.option("--convention", type=_LazyChoice(_conventions), default="auto",
              show_default=True, help="FLOPs per token for claims with an architecture (auto: the most complete "
              "the fields allow).")
@click.option("--causal-halving", is_flag=True, help="Halve the attention FLOPs for causal masking.")
@click.option("-v", "--verbose", is_flag=True, help="Text output: show passing checks too.")
@click.option("--title", default="train-audit report", show_default=True, help="Title of the HTML/Markdown report.")
@click.option("--sheet", default=None, metavar="NAME|N|all",
              help="The sheet of .xlsx input to read: a name, a number from 1, or 'all' (every sheet shown, each "
                   "claim placed as book.xlsx[SHEET]; a sheet with no claims is noted); default the first shown.")
@click.option("--columns", "columns_map", default=None, metavar="MAP", type=click.Path(dir_okay=True),
              help="A column map (.toml or .json; schemas/columns.schema.json): your headers and their units "
                   "onto the canonical fields.")
@click.option("--profile", default=None, metavar="NAME",
              help="A built-in column profile (epoch); recognised from the header when not given; 'none': never.")
@click.option("--mlflow", "mlflow_uri", default=None, metavar="URI",
              help="Also audit the runs of an MLflow tracking store (an mlruns/ folder or sqlite:///file.db; "
                   "the mlflow extra).")
@click.option("--experiment", "experiments", multiple=True, metavar="NAME",
              help="With --mlflow: the experiment to read (repeatable; default every experiment).")
@click.option("--select", multiple=True, metavar="CODES",
              help="Report only these rules, by code or prefix (C001, C0, U; comma-separated or repeated; ALL).")
@click.option("--ignore", multiple=True, metavar="CODES",
              help="Report nothing from these rules (they still run and derive values), by code or prefix.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rules to report in addition to --select.")
@click.option("--statistics", is_flag=True,
              help="Print one line per rule with its counts of findings instead of the report.")
@click.option("-q", "--quiet", is_flag=True,
              help="Text output: only the summary line; no notes on standard error (errors only).")
@click.option("--config", "config_file", default=None, metavar="FILE", is_eager=True, expose_value=False,
              callback=lambda ctx, param, value: _settings_option(ctx, param, value),
              help="Read settings from FILE (a train-audit.toml, or a pyproject.toml with [tool.train-audit]); "
                   "default: the nearest one up from the current folder.")
@click.option("--isolated", is_flag=True, is_eager=True, expose_value=False,
              callback=lambda ctx, param, value: _settings_option(ctx, param, value),
              help="Read no settings file.")
@click.option("--catalog", "catalog_file", default=None, metavar="FILE",
              help="Your accelerators (CSV or JSON, schemas/catalog.schema.json): added to the catalog or "
                   "overriding its figures (a negotiated price, a measured average power).")
@click.option("--batch-size", type=click.IntRange(min=1), default=None, metavar="N",
              help="Audit N claims at a time and write --format json|csv|parquet and --findings as each batch is "
                   "done (memory bounded by N, not the input; a folder of Parquet files is read this way, and so "
                   "are Parquet files of more than 100,000 claims written as text, or as json, csv or parquet to a "
                   "file; text shows the 1,000 worst claims and counts all).")
@click.option("-j", "--jobs", default=None, metavar="N|auto", callback=lambda ctx, param, value: _jobs(value),
              help="Audit batches in N processes at once (auto: one per core) and write the claims table (csv, "
                   "parquet) or the json report to a file, and --findings, as with one, byte for byte; implies "
                   "batches, of 100,000 / N claims (at least 10,000; json: 5,000) unless --batch-size says. Memory "
                   "grows with N. Other reports are made by one process. Default: a table or json report of an "
                   "input read in batches anyway (a dataset, a Parquet file of more than 100,000 claims, "
                   "--batch-size), or the json report of Parquet of more than 5,000 claims, is made in one process "
                   f"per core, at most {DEFAULT_MAX_JOBS}; anything else in one.")
def check(paths: tuple[str, ...], fmt: str, output: str | None, fail_on: str, findings_path: str | None,
          tolerance: tuple[str, ...], band: str | None, bytes_per_param: float | None, convention: str,
          causal_halving: bool, verbose: bool, title: str, sheet: str | None,
          select: tuple[str, ...] = (), ignore: tuple[str, ...] = (), extend_select: tuple[str, ...] = (),
          statistics: bool = False, quiet: bool = False, columns_map: str | None = None,
          profile: str | None = None, mlflow_uri: str | None = None, experiments: tuple[str, ...] = (),
          catalog_file: str | None = None, batch_size: int | None = None, jobs: int | None = None) -> None:
    """Audit claims in PATHS (JSON, JSON Lines, CSV, Parquet, XLSX; '-' reads JSON, JSON Lines or CSV from stdin; a
    folder: the Parquet files in it, a partitioned dataset).

    With no PATHS, audits the bundled corpus of published training runs.
    """
    from audit.allocator import keep_freed_memory
    from audit.batching import default_batch_size, start_workers_server, unread_in_folders

    if quiet and verbose:
        raise AuditUsageError("-q/--quiet and -v/--verbose ask for opposite things; give one")
    tolerance, ignore, extend_select = _with_settings_lists(tolerance=tolerance, ignore=ignore,
                                                           extend_select=extend_select)
    _say_which_settings(quiet)
    codes = _selection(select, ignore, extend_select)
    config = _config(tolerance, band, bytes_per_param, convention, causal_halving)
    keep_freed_memory()  # the process ends after the audit: freed arrays are kept for the next (audit.allocator)
    inputs = list(paths) if paths else [str(_bundled_corpus())]
    fmt = _format_of_output(fmt, output)
    _check_targets(output, findings_path, inputs, fmt)
    # A claims table alone shows no outlier note and no explanation: they are not made (the table is the same).
    words = not (fmt in ("csv", "parquet") and findings_path is None and not statistics)
    claims = _parquet_claims(paths)  # from the Parquet footers, read once
    paths = _small_datasets_whole(paths, claims, fmt, output, batch_size)
    batched = batch_size is not None or any(_is_dataset(p) for p in paths) or \
        _large_parquet(claims, fmt, output, mlflow_uri, statistics)
    if jobs is None:
        jobs = default_jobs(fmt, output, batched, claims)
    elif jobs > 1 and not (fmt in ("csv", "parquet", "json") and output not in (None, "-")):
        if not quiet:
            click.echo(f"train-audit: note: --jobs {jobs}: a {fmt} report is made by one process (--jobs applies to "
                       f"a csv or parquet table or the json report written to a file with -o, and to --findings)",
                       err=True)
        jobs = 1
    if not quiet:
        for folder, message in unread_in_folders(inputs):
            click.echo(f"train-audit: note: {_printable(folder)}: {message}", err=True)
    if jobs > 1 and (claims is None or claims > (batch_size or default_batch_size(jobs, fmt))):
        # Decided without importing the audit (audit.batching): the workers' server imports it beside this process.
        start_workers_server()
    from audit.api import check as run_check
    from audit.findings import exit_status
    from audit.reading import LoadError

    if batched or jobs > 1:
        _check_in_batches(inputs, fmt, output, findings_path, fail_on, config, batch_size, quiet, codes,
                          sheet=sheet, columns_map=columns_map, profile=profile, mlflow_uri=mlflow_uri,
                          statistics=statistics, catalog_file=catalog_file, verbose=verbose, words=words, jobs=jobs)
    try:
        if experiments and not mlflow_uri:
            raise LoadError("--experiment", "applies to --mlflow only")
        result = run_check(paths, config, sheet=sheet, columns=columns_map, profile=profile, mlflow=mlflow_uri,
                           experiments=experiments, catalog=_user_catalog(catalog_file), words=words)
    except LoadError as exc:
        if click.get_current_context().find_root().obj.get("debug"):
            traceback.print_exc()
        raise AuditUsageError(str(exc)) from None
    if codes is not None:
        from audit.selection import apply

        result = apply(result, codes)  # ignored rules ran (their values are kept); their findings are dropped
    if not quiet:
        _say_how_it_was_read(result.claims)
    if statistics:
        data: str | bytes | Iterable[str] = _statistics(result, fmt)
    elif quiet and fmt == "text":
        from audit.report.ci import summary_line

        data = summary_line(result) + "\n"
    else:
        data = _render(result, fmt, _printable(title), verbose, output, _command(), pieces=True)
    findings_data = None
    if findings_path:
        from audit.report import table

        findings_data = table.findings_bytes(result, findings_path)
    write_output(data, output, tuple(inputs))
    if findings_data is not None:
        write_output(findings_data, findings_path, tuple(inputs))
    if output not in (None, "-") and not quiet:
        # As linters do: the report went to a file, the verdict in one line to the terminal.
        from audit.records import summary

        s = summary(result)
        counts = ", ".join(f"{v} {k}" for k, v in s["status"].items())
        written = output + (f" and {findings_path}" if findings_path else "")
        click.echo(f"{s['claims']} claim{'s' * (s['claims'] != 1)}: {counts}; report written to {written}", err=True)
    sys.exit(exit_status(result.status.tolist(), fail_on))


def _bundled_corpus() -> Any:
    """:func:`audit.reading.bundled_corpus_path`, looked up when called (a test replaces it)."""
    import audit.reading

    return audit.reading.bundled_corpus_path()


def _streamable(fmt: str, output: str | None) -> bool:
    """Whether a report can be written batch by batch: text (the worst claims kept), or a table or JSON to a
    file."""
    return fmt == "text" or (fmt in ("json", "csv", "parquet") and output not in (None, "-"))


def _large_parquet(claims: int | None, fmt: str, output: str | None, mlflow_uri: str | None,
                   statistics: bool) -> bool:
    """Parquet input of more than a batch of claims (:data:`audit.batching.DEFAULT_BATCH_SIZE`; ``claims``:
    :func:`_parquet_claims`), written as a table or JSON to a file or as text: audited in batches by default, so that
    memory stays bounded (the claims, findings and text report are the same as in one piece, tests/test_stream.py)."""
    if claims is None or mlflow_uri or statistics or not _streamable(fmt, output):
        return False
    from audit.batching import DEFAULT_BATCH_SIZE

    return claims > DEFAULT_BATCH_SIZE


def _parquet_claims(paths: tuple[str, ...]) -> int | None:
    """The claims of Parquet inputs, from their footers (None: no paths, or an input that is not a Parquet file or
    folder of them, or one that cannot be read)."""
    if not paths or not all(p != "-" and (p.lower().endswith((".parquet", ".pq")) or os.path.isdir(p)) for p in paths):
        return None
    from audit.batching import count_rows, parquet_files

    try:
        return count_rows(parquet_files(list(paths)))
    except Exception:  # a missing or unreadable input: the read itself says so
        return None


def _small_datasets_whole(paths: tuple[str, ...], claims: int | None, fmt: str, output: str | None,
                          batch_size: int | None) -> tuple[str, ...]:
    """The inputs, with each folder of Parquet files replaced by its files when the report needs every claim at
    once (``-f github``, ``sarif``, ``html``, or JSON to standard output) and all of them fit in one batch: read
    whole, as the files named one by one are. A larger folder is audited in batches, which such a report cannot
    be written from."""
    from audit.batching import DEFAULT_BATCH_SIZE, parquet_files

    if batch_size is not None or _streamable(fmt, output) or claims is None or claims > DEFAULT_BATCH_SIZE \
            or not any(_is_dataset(p) for p in paths):
        return paths
    return tuple(f for p in paths for f in (parquet_files([p]) if _is_dataset(p) else [p]))


def _is_dataset(path: str) -> bool:
    """A folder holding Parquet files (a partitioned dataset), read batch by batch; any other folder is an
    unusable input, said as such by the reader."""
    if path == "-" or not os.path.isdir(path):
        return False
    for _root, _dirs, files in os.walk(path):
        if any(f.lower().endswith((".parquet", ".pq")) and not f.startswith((".", "_")) for f in files):
            return True
    return False


def _check_in_batches(inputs: list[str], fmt: str, output: str | None, findings_path: str | None, fail_on: str,
                      config: Any, batch_size: int | None, quiet: bool, codes: Any, *, sheet: str | None,
                      columns_map: str | None, profile: str | None, mlflow_uri: str | None, statistics: bool,
                      catalog_file: str | None, verbose: bool = False, words: bool = True, jobs: int = 1) -> None:
    """``check`` batch by batch (:mod:`audit.stream`): the claims table and the findings written as each batch is
    done, a progress bar on a terminal's standard error, the verdict from the counts of the whole input."""
    from audit.findings import fail_levels
    from audit.reading import LoadError, ReadOptions, resolve_maps
    from audit.batching import count_rows, default_batch_size, parquet_files
    from audit.stream import BatchAuditor, stream_check

    if not _streamable(fmt, output):
        raise AuditUsageError("batches (--batch-size, or a folder of Parquet files of more than one batch of "
                              "claims) are written as --format text, or json, csv or parquet with -o FILE (and "
                              "--findings FILE); the other formats need the whole input at once")
    if mlflow_uri or statistics:
        raise AuditUsageError(f"{'--mlflow' if mlflow_uri else '--statistics'} does not work in batches "
                              f"(--batch-size, or a folder input)")
    for folder in (p for p in inputs if p != "-" and os.path.isdir(p)):
        for option, target in (("-o", output), ("--findings", findings_path)):
            if target and os.path.realpath(target).startswith(os.path.join(os.path.realpath(folder), "")):
                raise AuditUsageError(f"{option} {target} is inside the input folder {folder}; a later run would "
                                      f"read it as input: write it elsewhere")
    audit_one = BatchAuditor(config, _user_catalog(catalog_file), codes, words)

    try:
        options = ReadOptions(sheet=sheet, maps=resolve_maps(columns_map, profile))
        total = count_rows(parquet_files(inputs))
        show = not quiet and total is not None and bool(getattr(sys.stderr, "isatty", lambda: False)())
        # A progress bar only on a terminal (click's: off the terminal it would still print its label).
        bar = click.progressbar(length=total, label="auditing", file=sys.stderr, show_pos=True) if show else None
        with bar if bar is not None else contextlib.nullcontext():
            summary = stream_check(inputs, output, fmt, findings_path, config,
                                   batch_size or default_batch_size(jobs, fmt), options,
                                   progress=None if bar is None else bar.update, audit=audit_one,
                                   show_ok=verbose, jobs=jobs)
    except LoadError as exc:
        if click.get_current_context().find_root().obj.get("debug"):
            traceback.print_exc()
        raise AuditUsageError(str(exc)) from None
    except OSError as exc:  # the output: no space left, permission denied
        from audit.reading.paths import os_error

        raise AuditUsageError(f"cannot write {output}: {os_error(exc)}") from None
    if not quiet:
        _say_how_it_was_read(summary)
    if summary.text is not None and not quiet:
        # The text report (its worst claims in full, the counts of all), as in one piece, without colour.
        write_output(summary.text, output, tuple(inputs))
    s = summary.as_dict()
    counts = ", ".join(f"{v} {k}" for k, v in s["status"].items())
    if output not in (None, "-") and not quiet:
        written = output + (f" and {findings_path}" if findings_path else "")
        click.echo(f"{s['claims']} claims in {summary.batches} batches: {counts}; report written to {written}",
                   err=True)
    elif quiet and fmt == "text":
        click.echo(f"{s['claims']} claim{'s' * (s['claims'] != 1)}: {counts}")  # as -q prints it in one piece
    levels = fail_levels(fail_on)
    sys.exit(1 if any(summary.status.get(s, 0) for s in levels) else 0)


def _settings_option(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Callback of the eager ``--config`` and ``--isolated``: once both are known, read the settings file and give
    its values to click as the command's ``default_map``, so that the command line overrides them."""
    ctx.meta[f"train_audit.{param.name}"] = value
    if "train_audit.config_file" in ctx.meta and "train_audit.isolated" in ctx.meta:
        _load_settings(ctx, ctx.meta["train_audit.config_file"], ctx.meta["train_audit.isolated"])
    return value


def _load_settings(ctx: click.Context, config_file: str | None, isolated: bool) -> None:
    from audit import settings

    if isolated:
        if config_file:
            raise AuditUsageError("--config and --isolated ask for opposite things; give one")
        return
    try:
        path = Path(config_file) if config_file else settings.find()
        if path is None:
            return
        found = settings.read(path)
        ctx.default_map = {**(ctx.default_map or {}), **settings.default_map(found, ctx.command, ctx)}
    except settings.SettingsError as exc:
        raise AuditUsageError(_printable(str(exc))) from None
    ctx.meta["train_audit.settings_path"] = path


def _say_which_settings(quiet: bool) -> None:
    path = click.get_current_context().meta.get("train_audit.settings_path")
    if path is not None and not quiet:
        click.echo(f"train-audit: note: settings from {_printable(str(path))}", err=True)


def default_jobs(fmt: str, output: str | None, batched: bool, claims: int | None = None) -> int:
    """``check``'s processes when ``--jobs`` is not given: one per core (at most :data:`DEFAULT_MAX_JOBS`) for a
    claims table or the JSON report written to a file from an input read in batches anyway, or for the JSON report
    of more than one of its batches of ``claims`` (:data:`audit.batching.JSON_JOB_BATCH_SIZE`; None: not counted), whose
    bytes are those of one process (tests/test_parallel.py); one for anything else (a report made by one process,
    or an input of one batch, where starting workers would only add their start-up). Measured on this 2-core
    machine (bench/scale.py): 1,000,000 claims Parquet → Parquet in 23.9 s with two workers against 34.0 s in one
    process; the JSON report of 100,000 claims in 47.0 s against 79.4 s; the same bytes."""
    from audit.batching import JSON_JOB_BATCH_SIZE

    if fmt not in ("csv", "parquet", "json") or output in (None, "-"):
        return 1
    if not (batched or (fmt == "json" and claims is not None and claims > JSON_JOB_BATCH_SIZE)):
        return 1
    return min(DEFAULT_MAX_JOBS, _cores())


def _cores() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def _jobs(value: str | None) -> int | None:
    """``--jobs``: a number of processes, at least 1, or ``auto`` (one per core this process may use); None when
    not given (:func:`default_jobs`)."""
    if value is None:
        return None
    text = str(value).strip().lower()
    if text == "auto":
        return _cores()
    try:
        jobs = int(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a number of processes (a whole number, or auto)") from None
    if jobs < 1:
        raise click.BadParameter(f"{jobs} processes: give at least 1 (or auto)")
    return jobs


def _selection(select: tuple[str, ...], ignore: tuple[str, ...], extend_select: tuple[str, ...]
               ) -> frozenset[str] | None:
    """The rules to report (None: all), from ``--select``, ``--ignore`` and ``--extend-select``."""
    if not (select or ignore or extend_select):
        return None
    from audit.selection import SelectionError, enabled

    try:
        return enabled(select, ignore, extend_select)
    except SelectionError as exc:
        raise AuditUsageError(str(exc)) from None


def _statistics(result: Any, fmt: str) -> str:
    """``--statistics``: one line per rule with findings worse than ok (phases' included), most first, as ruff
    prints them: count, code, name, and the count by severity; a JSON list with ``--format json``."""
    from audit.records import summary
    from audit.report.ci import summary_line
    from audit.rules import RULES

    findings = result.findings[["rule", "severity"]].astype({"rule": str, "severity": str})
    if result.phase_result is not None:
        import pandas as pd

        findings = pd.concat([findings, result.phase_result.findings[["rule", "severity"]].astype(
            {"rule": str, "severity": str})], ignore_index=True)
    counts = summary(result)["rules"]
    by_severity = findings[findings["severity"] != "ok"].groupby(["rule", "severity"]).size()
    rows = []
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        parts = {s: int(by_severity.get((code, s), 0)) for s in ("error", "warning", "info")}
        rows.append({"code": code, "name": RULES[code].name, "count": count, **parts})
    if fmt == "json":
        from audit.report import json_out

        return json_out.dumps(rows)
    width = max([len(r["name"]) for r in rows], default=0)
    lines = [f"{r['count']:>7}  {r['code']}  {r['name']:<{width}}  "
             + ", ".join(f"{r[s]} {s}" for s in ("error", "warning", "info") if r[s]) for r in rows]
    return "\n".join([*lines, summary_line(result)]) + "\n"


#: Unread columns named per file on stderr; the rest are counted (all are in ``Claims.unread_columns``).
_MAX_UNREAD_SHOWN = 20


def _printable(text: str) -> str:
    """Command-line text that can be written out (an argument that is not UTF-8 arrives with lone surrogates)."""
    from audit.reading.common import printable

    return printable(text)


def _say_how_it_was_read(claims: Any) -> None:
    """Notes about how each input was read, and the columns not read (once per file, with a did-you-mean), on
    standard error: a column the tool did not understand is never dropped without a word."""
    for file, message in claims.notes:
        click.echo(f"train-audit: note: {file}: {message}", err=True)
    by_file: dict[str, list[tuple[str, str | None]]] = {}
    for file, column, hint in claims.unread_columns:
        by_file.setdefault(file, []).append((column, hint))
    for file, columns in by_file.items():
        shown = [f"{c!r} (did you mean {h}?)" if h else repr(c) for c, h in columns[:_MAX_UNREAD_SHOWN]]
        more = f" and {len(columns) - _MAX_UNREAD_SHOWN:,} more" if len(columns) > _MAX_UNREAD_SHOWN else ""
        what = "column is" if len(columns) == 1 else "columns are"
        click.echo(f"train-audit: warning: {file}: {len(columns):,} {what} not read (kept as extra fields): "
                   f"{', '.join(shown)}{more}", err=True)


def _render(result: Any, fmt: str, title: str, verbose: bool, output: str | None, command: str | None = None,
            pieces: bool = False) -> str | bytes | Iterable[str]:
    """The report; ``pieces``: JSON as an iterator of its pieces, a chunk of claims at a time, to be written as they
    come (never every record, or all the text, at once)."""
    from audit import report

    if fmt == "json" and pieces:
        from audit.report import json_out

        return json_out.chunks(result)
    renderer = report.get(fmt)
    to_stdout = output in (None, "-")
    if renderer.binary and to_stdout and sys.stdout.isatty():
        raise AuditUsageError(f"--format {fmt} is binary: give -o FILE.{fmt}")
    # Colour only for a terminal: a report written with -o never holds escape codes.
    style = _styler(to_stdout and _use_color(sys.stdout))
    return renderer.render(result, report.Options(title=title, verbose=verbose, style=style, command=command))


def _command() -> str:
    """The command line as the report shows it: ``train-audit`` (not the install path), output files by name only
    (a report does not change with the folder it is written to), undecodable bytes escaped."""
    args = list(sys.argv[1:])
    for i, arg in enumerate(args[:-1]):
        if arg in ("-o", "--output", "--findings"):
            args[i + 1] = os.path.basename(args[i + 1])
    text = " ".join(["train-audit", *args])
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _estimate_options(func: Callable[..., Any]) -> Callable[..., Any]:
    from audit.quantities import INPUT_QUANTITIES

    from audit.quantities import BY_NAME

    text_help = {"hardware": "accelerator as written (H100, 'TPU v4', 'A100 80GB'); see `train-audit hardware`",
                 "precision": "arithmetic of the peak: bf16, fp16, fp8, tf32, fp32 (default: the part's usual one)",
                 "activation_recompute": "none, selective or full", "mlp": "swiglu or gelu"}
    for name in reversed((*INPUT_QUANTITIES, *text_help)):
        if name in text_help:
            help_text, metavar = text_help[name], "TEXT"
        else:
            q = BY_NAME[name]
            sized = name in ("params", "active_params", "trainable_params", "tokens", "dataset_tokens", "dataset_size")
            unit = (f" (a number in {q.unit}, or text with units)" if q.unit
                    else " (a number, or text such as 70B)" if sized else " (a number)")
            unit = " (a fraction, or a percentage such as 40%)" if q.fraction else unit
            help_text, metavar = f"{q.description}{unit}", "VALUE"
        func = click.option(f"--{name.replace('_', '-')}", name, default=None, metavar=metavar, help=help_text)(func)
    return func


def _user_catalog(path: str | None) -> Any:
    """The catalog with the rows of ``--catalog FILE`` (None without the option); a bad file is a usage error
    naming the file, row and field (exit 2)."""
    if path is None:
        return None
    from audit.catalog_file import CatalogFileError, load_catalog_file

    try:
        return load_catalog_file(path)
    except CatalogFileError as exc:
        raise AuditUsageError(f"--catalog {exc}") from None


def _check_references(choices: dict[str, str | None]) -> None:
    """``--grid``, ``--site`` and ``--price-from`` name rows of the reference data (else exit 2 with the keys)."""
    from audit.planning import REFERENCE_OPTIONS
    from audit.reference import keys

    for option, key in choices.items():
        if key is None:
            continue
        kind = REFERENCE_OPTIONS[option][1]
        if key.strip().lower() not in keys(kind):
            raise AuditUsageError(f"--{option.replace('_', '-')} {key!r}: not in audit/data/energy_reference.csv; "
                                  f"known: {', '.join(keys(kind))}")


def _check_estimate_inputs(given: dict[str, Any]) -> None:
    """Refuse values that cannot be used before anything is computed (exit 2): unreadable or out of range, and
    a utilization above 1 (written as a percentage without %)."""
    from audit.quantities import BY_NAME
    from audit.reading import claims_from_records
    from audit.units import is_bare_number

    claims = claims_from_records([{**given, "id": "estimate"}], file="<estimate>")
    problems = [f"--{f.replace('_', '-')}: {m}" for f, m in zip(claims.invalid["field"], claims.invalid["message"])]
    for name, value in claims.values.iloc[0].items():
        q = BY_NAME.get(str(name))
        if q is None or value != value:
            continue
        option = f"--{name.replace('_', '-')} {given[name]}"
        if q.fraction and is_bare_number(given[name]):
            # A file's utilization of 1 to 100 without a unit is read as a percentage (and said); an option is
            # refused instead, with the two ways to write it.
            value = float(str(given[name]).replace(",", ""))
        if q.fraction and value > 1:
            if "%" in str(given[name]) or value > 100:
                # Written with % (140%), or beyond any percentage: no reading of it is a utilization.
                problems.append(f"{option}: {q.label} cannot exceed 100 % (a fraction of at most 1)")
            else:
                problems.append(f"{option}: a fraction of 1 is expected; {value:g} looks like a percentage: "
                                f"write {value / 100:g} or {value:g}%")
        elif name == "pue" and value < 1:
            problems.append(f"{option}: PUE is at least 1 (1.0: the chips' own power, no facility overhead)")
    if problems:
        raise AuditUsageError("; ".join(problems))


@cli.command()
@_estimate_options
@click.option("--convention", type=_LazyChoice(_conventions), default="auto",
              show_default=True, help="FLOPs per token when an architecture is given.")
@click.option("--causal-halving", is_flag=True, help="Halve the attention FLOPs for causal masking.")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json", "html"]), default="text",
              show_default=True, help="html: a sweep's table and plots as one page.")
@click.option("-v", "--verbose", is_flag=True, help="Show the datasheet sources of catalog figures.")
@click.option("--grid", default=None, metavar="REGION",
              help="Carbon intensity from the reference data (audit/data/energy_reference.csv): world, us, eu, ...")
@click.option("--site", default=None, metavar="KIND",
              help="PUE from the reference data: hyperscale, industry-average, google-fleet, chips-only.")
@click.option("--price-from", default=None, metavar="KEY",
              help="Price per chip-hour from the reference data (e.g. h100-on-demand-aws-2024).")
@click.option("--catalog", "catalog_file", default=None, metavar="FILE",
              help="Your accelerators (CSV or JSON, schemas/catalog.schema.json).")
@click.option("-o", "--output", default=None, help="Write to this file ('-' or omitted: standard output).")
@click.option("--bytes-per-param", type=float, default=None,
              help="Training-state bytes per parameter for the fewest chips that hold it (default 16).")
def estimate(fmt: str, convention: str, causal_halving: bool, verbose: bool, grid: str | None, site: str | None,
             price_from: str | None, catalog_file: str | None, output: str | None, bytes_per_param: float | None,
             **quantities: Any) -> None:
    """Solve for everything the given quantities determine.

    Example: train-audit estimate --params 70B --tokens 1.4T --hardware H100 --chips 4096 --mfu 0.4

    One quantity may be a sweep: a list (--chips 1024,2048,4096) or a range (--mfu 0.3:0.5:0.05); the answer is
    then a table (text), rows (json) or a page with plots (html). Energy, CO2 and cost come from a power per
    chip (default: the accelerator's TDP, an upper bound, said so), PUE, carbon intensity and price, stated or
    chosen from the reference data (--grid, --site, --price-from).
    """
    from audit.api import estimate as run_estimate
    from audit.planning import SweepError, find_sweep

    given = {k: v for k, v in quantities.items() if v is not None}
    if not given:
        raise AuditUsageError("give at least one quantity, e.g. --params 70B --tokens 1.4T")
    references = {"grid": grid, "site": site, "price_from": price_from}
    _check_references(references)
    catalog = _user_catalog(catalog_file)
    config = _config(convention=convention, causal_halving=causal_halving, bytes_per_param=bytes_per_param)
    try:
        sweep = find_sweep(given)
    except SweepError as exc:
        raise AuditUsageError(str(exc)) from None
    if sweep is not None:
        runs = [{**given, sweep.name: value} for value in sweep.values]
        for run in runs:
            _check_estimate_inputs(run)
        results = [run_estimate(run, config, catalog, references) for run in runs]
        from audit.report import sweep as sweep_out

        render = {"json": sweep_out.render_json, "html": sweep_out.render_html}.get(fmt, sweep_out.render_text)
        write_output(render(sweep.name, sweep.values, results), output)
        invalid = any(r.status.iat[0] == "invalid" for r in results)
        sys.exit(EXIT_USAGE if invalid else EXIT_OK)
    if fmt == "html":
        raise AuditUsageError("--format html plots a sweep: give one quantity as a list (--chips 1024,2048) or a "
                              "range (--mfu 0.3:0.5:0.05)")
    _check_estimate_inputs(given)
    result = run_estimate(given, config, catalog, references)
    if fmt == "json":
        from audit.report import json_out

        write_output(json_out.render_estimate(result), output)
    else:
        from audit.report import text

        write_output(text.render_estimate(result, _styler(_use_color(sys.stdout) and output is None),
                                          verbose=verbose), output)
    invalid = result.status.iat[0] == "invalid"
    sys.exit(EXIT_USAGE if invalid else EXIT_OK)


@cli.command()
@click.argument("query", required=False)
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--catalog", "catalog_file", default=None, metavar="FILE",
              help="Your accelerators (CSV or JSON, schemas/catalog.schema.json), added or overriding.")
def hardware(query: str | None, fmt: str, catalog_file: str | None = None) -> None:
    """List the accelerator catalog (or look up QUERY by name or alias)."""
    from audit import jsontext as json_out  # the standard library only: no renderers, pandas or pyarrow
    from audit.catalog import load_catalog

    catalog = _user_catalog(catalog_file) or load_catalog()
    rows = list(catalog)
    reading = None  # how check reads a query that lists or counts accelerators
    if query:
        hit = catalog.lookup(query)
        sliced = catalog.tpu_slice(query) if hit is None else None
        parts = catalog.resolve_mix(query) if hit is None and sliced is None else None
        if sliced is not None:  # "TPU v3-256", "2048 TPU v3 cores": TensorCores, as check reads them (H003)
            from audit.catalog import tpu_cores_per_chip

            accel, cores = sliced
            per = tpu_cores_per_chip(accel.id)
            rows = [accel]
            chips = f"{cores / per:,.0f} × " if per else ""
            reading = (f"{query!r} is read as {chips}{accel.name} ({cores:,.0f} TensorCores"
                       f"{f', {per} per chip' if per else ''})")
        elif parts and all(accel is not None for _, accel in parts):
            rows = list({accel.id: accel for _, accel in parts if accel is not None}.values())
            counts = catalog.mix_counts(query)
            listed = [(f"{c:,.0f} × " if c is not None else "") + str(getattr(a, "name", "")) for (_, a), c in
                      zip(parts, counts or [None] * len(parts))]
            how = (" (one accelerator, counted)" if len(parts) == 1 else
                   ": check uses their chip-weighted mean peak" if counts else
                   ": without chips per part, check uses only a peak they share")
            reading = f"{query!r} is read as {' + '.join(listed)}{how}"
        elif hit is None:
            unknown = [part for part, accel in parts or [] if accel is None]
            close = catalog.close_matches(unknown[0] if unknown else query)
            raise AuditUsageError(f"unknown accelerator {unknown[0] if unknown else query!r}" +
                                  (f" (in {query!r})" if unknown else "") +
                                  (f"; close matches: {', '.join(close)}" if close else ""))
        else:
            rows = [hit]
    if fmt == "json":
        data = [{"id": a.id, "name": a.name, "vendor": a.vendor, "unit": a.unit, "memory_gb": a.memory_gb,
                 "tdp_w": None if a.tdp_w != a.tdp_w else a.tdp_w, "peak_tflops": a.peaks_tflops,
                 "default_precision": a.default_precision, "sparse_headline": a.sparse_headline,
                 "source_compute": a.source_compute, "source_memory": a.source_memory,
                 "confidence": a.confidence} for a in rows]
        write_output(json_out.dumps(data), None)
        return
    lines = [f"{'id':<22} {'name':<36} {'bf16':>8} {'fp16':>8} {'fp8':>8} {'mem GB':>7}  unit"]
    for a in rows:
        def p(k: str) -> str:
            v = a.peaks_tflops.get(k)
            return "—" if v is None else f"{v:g}"
        lines.append(f"{a.id:<22} {a.name[:36]:<36} {p('bf16'):>8} {p('fp16'):>8} {p('fp8'):>8} "
                     f"{a.memory_gb:>7g}  {a.unit}")
    if reading is not None:
        lines += ["", reading]
    elif query and rows:
        a = rows[0]
        lines += ["", f"source (compute): {a.source_compute}", f"source (memory):  {a.source_memory}"]
        if a.tdp_w == a.tdp_w:
            lines.append(f"TDP:              {a.tdp_w:g} W ({a.source_tdp})")
        from audit.catalog_file import extra_figure

        for column, unit in (("price_per_chip_hour", "USD per chip-hour"), ("avg_power_w", "W average")):
            own = extra_figure(catalog, a.id, column)
            if own is not None:
                lines.append(f"your catalog:     {own[0]:g} {unit} ({own[1]})")
        if a.notes:
            lines.append(f"notes: {a.notes}")
    else:
        lines.append(f"\n{len(rows)} accelerators; dense peak TFLOP/s. `train-audit hardware NAME` shows sources.")
    write_output("\n".join(lines) + "\n", None)


@cli.command()
@click.argument("code", required=False)
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules(code: str | None, fmt: str) -> None:
    """List the rules (or show one rule's documentation)."""
    import textwrap

    from audit import jsontext as json_out  # the standard library only: no renderers, pandas or pyarrow
    from audit.config import Config
    from audit.rules import RULES, all_rules

    selected = list(all_rules())
    if code:
        rule = RULES.get(code.upper())
        if rule is None:
            raise AuditUsageError(f"no rule {code!r}; `train-audit rules` lists them")
        selected = [rule]
    config = Config.default()
    if fmt == "json":
        write_output(json_out.dumps([{"code": r.code, "name": r.name, "severity": r.severity, "quantity": r.quantity,
                                      "formula": r.formula, "doc": r.doc(), "tolerance": r.tolerance_text(config)}
                                     for r in selected]), None)
        return
    if code:
        r = selected[0]
        tolerance = r.tolerance_text(config)
        told = "\n" + textwrap.fill(f"**Tolerance.** {tolerance}", width=110) + "\n" if tolerance else ""
        write_output(f"{r.code} {r.name} (up to {r.severity})\n{r.formula}\n\n{r.doc()}\n{told}", None)
        return
    width = max(len(r.name) for r in selected)
    lines = [f"{r.code}  {r.name:<{width}}  {r.severity:<8} {r.summary()}" for r in selected]
    write_output("\n".join(lines) + "\n", None)


@cli.command()
@click.argument("code")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def explain(ctx: click.Context, code: str, fmt: str) -> None:
    """Show rule CODE's documentation (the same as `train-audit rules CODE`)."""
    ctx.invoke(rules, code=code, fmt=fmt)


@cli.command()
@click.argument("name", default="claims", metavar="[NAME]")
def schema(name: str) -> None:
    """Print a JSON Schema of the input (NAME: claims, the default; or another in schemas/)."""
    from audit.resources import schema_path

    folder = schema_path("claims.schema.json").parent
    known = sorted(p.name[: -len(".schema.json")] for p in folder.glob("*.schema.json"))
    if name not in known:
        raise AuditUsageError(f"no schema {name!r}; one of: {', '.join(known)}")
    write_output((folder / f"{name}.schema.json").read_text(encoding="utf-8"), None)


@cli.command("diff")
@click.argument("old", type=click.Path(dir_okay=True, allow_dash=False))
@click.argument("new", type=click.Path(dir_okay=True, allow_dash=False))
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("-o", "--output", default=None, help="Write to this file ('-' or omitted: standard output).")
@click.option("--key", type=click.Choice(["auto", "id", "name", "row"]), default="auto", show_default=True,
              help="How claims are matched (auto: id when every claim gives one, else name, else row).")
@click.option("--fail-on", default="fail", show_default=True, metavar="LEVEL[,unchecked]",
              callback=lambda _c, _p, v: _fail_on(v),
              help="Exit 1 when the new version brings a claim to this status that was not there before.")
@click.option("--columns", "columns_map", default=None, metavar="MAP", type=click.Path(dir_okay=True),
              help="A column map for both files.")
@click.option("--profile", default=None, metavar="NAME", help="A built-in column profile for both files.")
@click.option("--sheet", default=None, metavar="NAME|N|all",
              help="The sheet of .xlsx input to read ('all': every sheet shown; default the first shown).")
def diff_command(old: str, new: str, fmt: str, output: str | None, key: str, fail_on: str,
                 columns_map: str | None, profile: str | None, sheet: str | None) -> None:
    """Show what changed from OLD to NEW (two versions of a claims file or database): claims added and removed,
    figures changed, verdicts changed. Exit 0, or 1 when NEW brings a claim to --fail-on that was not there before,
    2 for unusable input."""
    import json as _json

    from audit.api import check as run_check
    from audit.diff import diff_results, exit_status, render_text
    from audit.reading import LoadError

    _check_targets(output, None, [old, new])
    try:
        results = [run_check([path], None, sheet=sheet, columns=columns_map, profile=profile) for path in (old, new)]
    except LoadError as exc:
        raise AuditUsageError(str(exc)) from None
    for r in results:
        _say_how_it_was_read(r.claims)
    record = diff_results(results[0], results[1], key)
    data = (_json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n" if fmt == "json"
            else render_text(record))
    write_output(data, output, (old, new))
    sys.exit(exit_status(record, fail_on))


def main() -> None:
    """Console-script entry point: runs the command, then ends the process (:func:`exit_process`)."""
    try:
        cli(prog_name="train-audit")
    except SystemExit as exc:
        exit_process(exc.code)
    exit_process(0)


def exit_process(code: Any) -> NoReturn:
    """End the process with ``code`` as :func:`sys.exit` would, without the interpreter's teardown when that is safe.

    The teardown frees every module's objects one by one; with pandas, pyarrow and numpy loaded it takes 0.15-0.2 s
    on the 2-core machine of ``bench/scale.py`` (``python -c "import pandas"``: 0.75 s, and 0.59 s ending with
    ``os._exit``), a fifth of a one-claim ``check``. What the teardown does that matters is done first: the
    handlers registered with :mod:`atexit` run (coverage's, multiprocessing's), and standard output and error are
    flushed. Any other thread still running (which a normal exit would wait for), or a flush that fails (a closed
    pipe: Python's own exit then says so), takes the normal way out."""
    import atexit
    import threading

    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message"): the message on stderr, status 1
        sys.exit(code)
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if threading.active_count() > 1 or run_exit_handlers is None:
        sys.exit(status)
    run_exit_handlers()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        sys.exit(status)
    os._exit(status)
