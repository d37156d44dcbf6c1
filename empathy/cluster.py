"""Distributed distancing parses on a Dask cluster, written to resumable Parquet partitions.

The spaCy parse is the one CPU-bound step of the pipeline (about 5,000 tokens/s per core); everything after it
(sentence counts, densities, the metrics) is numpy group-bys that one machine does in seconds. This module
spreads the parse over a ``dask.distributed`` cluster and leaves the rest single-process:

* the texts are cut into partitions of ``partition_size`` consecutive texts, in input order;
* each worker process loads the spaCy model once, when it joins (:class:`SpacyPlugin`, a ``WorkerPlugin``),
  and opens its parse cache (:class:`~empathy.distancing.DistancingCache`, keyed by model, model version,
  rules version and text hash) once;
* a partition is one task (:func:`parse_partition`, submitted with ``retries=``): the worker answers from its
  cache, parses the misses with :func:`empathy.distancing.analyze` (the single-process code, so the results
  are the same) and returns a small table;
* the driver writes each finished partition as ``part-NNNNNN.parquet`` (written to a hidden temporary file
  and renamed into place) and then its completion marker ``_markers/part-NNNNNN.json`` (also renamed into
  place), which records a digest of the partition's texts and the detector signature. A partition counts as
  done only when its marker matches the texts and signature of this run and its file has the recorded size.

So a re-run, or a run after a crash of the driver, the cluster or a worker, submits only the partitions
without a valid marker, and within such a partition a worker re-parses only the texts missing from its parse
cache. At most ``2 x workers + 2`` partitions are in flight at once: the driver reads the texts lazily and
its memory does not grow with their number. A worker killed mid-run loses only the partitions it was
parsing, which Dask reschedules on the other workers; a task that raises is retried ``retries`` times before
the run stops with :class:`PartitionFailed` (finished partitions stay on disk).

Scheduler addresses (:func:`parse_scheduler`): ``tcp://HOST:PORT`` for a running ``dask scheduler``, or
``local:N`` for a :class:`distributed.LocalCluster` of ``N`` single-threaded worker processes on this machine.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from distributed import Client, LocalCluster, WorkerPlugin, as_completed, get_worker
from numpy.typing import NDArray

from empathy.distancing import LABELS, DistancingCache, DistancingResult, analyze, text_key
from empathy.distancing.model import _load, base_vocabularies, detector_signature, load_model, resolve_model_name
from empathy.scheduler import SchedulerSpec, parse_scheduler

#: Default texts per partition: large enough that the per-task overhead (a few ms) is noise next to the
#: parse (a few seconds), small enough that a lost partition costs little.
DEFAULT_PARTITION_SIZE = 1_000
#: Columns of a partition file, in order.
COLUMNS: tuple[str, ...] = ("index", "text_sha256", "sentences", *LABELS, "result")
PLUGIN_NAME = "empathy-spacy"
_MARKERS = "_markers"
_MANIFEST = "_manifest.json"
_PART = re.compile(r"^part-(\d{6})\.parquet$")


class PartitionFailed(RuntimeError):
    """A partition failed after its retries; the partitions finished before it stay on disk."""


@contextlib.contextmanager
def open_client(spec: SchedulerSpec | str, *, timeout: float = 10.0) -> Iterator[Client]:
    """A Dask client for ``spec``; a ``local:N`` cluster is started here and shut down on exit.

    Raises ValueError (one line, naming the address) when the scheduler cannot be reached within ``timeout``
    seconds.
    """
    if isinstance(spec, str):
        spec = parse_scheduler(spec)
    # Dask logs every worker start and stop at INFO on stderr; the CLI's stderr is one line per problem.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    if spec.kind == "local":
        # One thread per worker: the parse holds the GIL, so threads would only contend. The scheduler's HTTP
        # server on a free port, not 8787 (taken by another cluster, it warns on stderr).
        with LocalCluster(n_workers=spec.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                          silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(spec.address, timeout=f"{timeout}s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"--scheduler {spec.address}: cannot connect ({str(exc).splitlines()[0]})") from None
    with client:
        yield client


class SpacyPlugin(WorkerPlugin):
    """Loads the spaCy model once per worker process (when the worker starts) and opens its parse cache.

    Parameters
    ----------
    model
        spaCy model package (``None``: the default of :func:`empathy.distancing.load_model`).
    cache_dir
        The parse cache's folder on the worker's machine; ``None`` for the worker's default
        (``$EMPATHY_CACHE_DIR/distancing``); ``False`` for no cache.
    """

    name = PLUGIN_NAME

    def __init__(self, model: str | None = None, cache_dir: str | None | bool = None) -> None:
        self.model = model
        self.cache_dir = cache_dir
        self.cache: DistancingCache | None = None
        self.signature = ""

    def setup(self, worker: Any) -> None:
        """Load the model and its vocabularies, open the cache: once per worker process."""
        nlp = load_model(self.model)
        base_vocabularies(nlp)
        self.signature = detector_signature(self.model)
        if self.cache_dir is not False:
            self.cache = DistancingCache(self.cache_dir or None)

    def teardown(self, worker: Any) -> None:
        """Close the parse cache."""
        if self.cache is not None:
            self.cache.close()


def parse_partition(first: int, texts: list[str], batch_size: int) -> tuple[str, pd.DataFrame, dict[str, int]]:
    """Run on a worker: ``(detector signature, partition table, worker facts)`` of ``texts``.

    ``first`` is the input position of ``texts[0]`` (the table's ``index`` column and error messages count from
    it). The worker facts are its process id and how many times that process loaded a spaCy model (1 with the
    plugin).
    """
    plugin = get_worker().plugins[PLUGIN_NAME]
    try:
        results = list(analyze(texts, cache=plugin.cache if plugin.cache is not None else False,
                               batch_size=batch_size, model=plugin.model))
    except (ValueError, TypeError) as exc:
        found = re.match(r"text #(\d+) (.*)", str(exc))
        if found is None:
            raise
        raise type(exc)(f"text #{first + int(found.group(1))} {found.group(2)}") from None
    frame = pd.DataFrame({
        "index": np.arange(first, first + len(texts), dtype=np.int64),
        "text_sha256": [text_key(text) for text in texts],
        "sentences": np.array([r.sentences for r in results], dtype=np.int64),
        **{label: np.array([r.counts[label] for r in results], dtype=np.int64) for label in LABELS},
        "result": [json.dumps(r.to_json(), ensure_ascii=False, separators=(",", ":")) for r in results],
    }, columns=list(COLUMNS))
    return plugin.signature, frame, {"pid": os.getpid(), "model_loads": _load.cache_info().misses}


def partition_digest(texts: Sequence[str]) -> str:
    """sha256 over the texts' own sha256 digests, in order: what a completion marker vouches for."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text_key(text).encode("ascii"))
    return digest.hexdigest()


class PartitionStore:
    """The output folder: ``part-NNNNNN.parquet`` files and their completion markers in ``_markers/``.

    Hidden and underscore-prefixed names are skipped by Parquet readers, so ``pandas.read_parquet(folder)``
    reads the partitions alone (in name order, which is input order).
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise ValueError(f"{self.directory}: exists and is not a folder")
        if self.directory.is_dir() and not (self.directory / _MARKERS).is_dir():
            stray = [p.name for p in self.directory.iterdir() if not p.name.startswith(".")]
            if stray:
                raise ValueError(f"{self.directory}: not empty and not an empathy partition folder "
                                 f"(found {stray[0]!r}); give a new or empty folder")
        (self.directory / _MARKERS).mkdir(parents=True, exist_ok=True)

    def part(self, index: int) -> Path:
        """The partition file of partition ``index``."""
        return self.directory / f"part-{index:06d}.parquet"

    def marker(self, index: int) -> Path:
        """The completion marker of partition ``index``."""
        return self.directory / _MARKERS / f"part-{index:06d}.json"

    def is_done(self, index: int, digest: str, signature: str) -> bool:
        """Whether partition ``index`` holds the results of texts with ``digest`` under ``signature``."""
        try:
            marker = json.loads(self.marker(index).read_text(encoding="utf-8"))
            return (isinstance(marker, dict) and marker.get("digest") == digest
                    and marker.get("signature") == signature
                    and self.part(index).stat().st_size == marker.get("bytes"))
        except (OSError, ValueError):
            return False

    def write(self, index: int, digest: str, signature: str, frame: pd.DataFrame) -> None:
        """Write the partition file, then its marker, each atomically (temporary file, fsync, rename)."""
        self.marker(index).unlink(missing_ok=True)
        part = self.part(index)
        temporary = part.with_name(f".{part.name}.{os.getpid()}.tmp")
        frame.to_parquet(temporary, index=False)
        _fsync(temporary)
        os.replace(temporary, part)
        payload = json.dumps({"partition": index, "rows": len(frame), "digest": digest, "signature": signature,
                              "bytes": part.stat().st_size})
        marker = self.marker(index)
        temporary = marker.with_name(f".{marker.name}.{os.getpid()}.tmp")
        temporary.write_text(payload, encoding="utf-8")
        _fsync(temporary)
        os.replace(temporary, marker)

    def finish(self, partitions: int, texts: int, partition_size: int, signature: str) -> None:
        """Remove partitions numbered ``partitions`` and above (left by a longer input); write the manifest."""
        for path in self.directory.iterdir():
            found = _PART.match(path.name)
            if found and int(found.group(1)) >= partitions:
                self.marker(int(found.group(1))).unlink(missing_ok=True)
                path.unlink()
        manifest = {"partitions": partitions, "texts": texts, "partition_size": partition_size,
                    "signature": signature}
        temporary = self.directory / f".{_MANIFEST}.tmp"
        temporary.write_text(json.dumps(manifest), encoding="utf-8")
        os.replace(temporary, self.directory / _MANIFEST)

    def manifest(self) -> dict[str, Any]:
        """The manifest of a finished run; ValueError when the folder holds no finished run."""
        try:
            return json.loads((self.directory / _MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{self.directory}: no finished partition run ({exc})") from None

    def frames(self, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame]:
        """The partition tables (or their ``columns``) of the finished run, in input order, one at a time."""
        for index in range(int(self.manifest()["partitions"])):
            yield pd.read_parquet(self.part(index), columns=list(columns) if columns is not None else None)


def _fsync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


@dataclass
class RunStats:
    """What a partitioned run did: partitions computed and skipped (already done), texts, and worker facts."""

    partitions: int = 0
    computed: int = 0
    skipped: int = 0
    texts: int = 0
    signature: str = ""
    model_loads: dict[int, int] | None = None

    def summary(self) -> str:
        """One line for stderr."""
        return (f"{self.texts:,} texts in {self.partitions:,} partitions: {self.computed:,} parsed, "
                f"{self.skipped:,} already done")


def _partitions(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    iterator = iter(texts)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def parse_to_partitions(
    texts: Iterable[str],
    output_dir: str | os.PathLike[str],
    client: Client,
    *,
    partition_size: int = DEFAULT_PARTITION_SIZE,
    model: str | None = None,
    cache_dir: str | None | bool = None,
    batch_size: int = 256,
    retries: int = 2,
    progress: Callable[[RunStats], None] | None = None,
) -> RunStats:
    """Parse ``texts`` on the cluster of ``client`` into the partition folder ``output_dir``; see the module.

    Parameters
    ----------
    texts
        Any iterable of strings, read lazily.
    output_dir
        New, empty or earlier partition folder; finished partitions with a valid marker are not recomputed.
    client
        A connected :class:`distributed.Client` (see :func:`open_client`).
    partition_size
        Texts per partition (and per task).
    model
        spaCy model package (``None``: the default).
    cache_dir
        The workers' parse cache folder (``None``: each worker's default, ``False``: no cache).
    batch_size
        ``nlp.pipe`` batch size on the workers.
    retries
        Times a partition whose task raised is resubmitted before the run fails.
    progress
        Called with the running :class:`RunStats` after each partition is written or skipped.

    Raises
    ------
    PartitionFailed
        A partition failed after its retries (or killed its workers); the finished partitions stay.
    ValueError
        A text the parser refuses (naming its input position), or an output folder that is not a partition
        folder.
    """
    if not isinstance(partition_size, int) or partition_size < 1:
        raise ValueError(f"partition_size must be a positive integer, got {partition_size!r}")
    if not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries must be a non-negative integer, got {retries!r}")
    store = PartitionStore(output_dir)
    signature = detector_signature(model)
    model_name = resolve_model_name(model)
    client.register_plugin(SpacyPlugin(model_name, cache_dir), name=PLUGIN_NAME)
    workers = max(1, len(client.scheduler_info(n_workers=-1)["workers"]))
    limit = 2 * workers + 2
    stats = RunStats(signature=signature, model_loads={})
    pending = as_completed()
    meta: dict[str, tuple[int, str]] = {}

    def collect(future: Any) -> None:
        index, digest = meta.pop(future.key)
        try:
            worker_signature, frame, facts = future.result()
        except (ValueError, TypeError):
            raise
        except Exception as exc:  # noqa: BLE001 - a worker error, KilledWorker, a lost scheduler
            raise PartitionFailed(f"partition {index} failed after {retries} retries: "
                                  f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc
        finally:
            future.release()
        if worker_signature != signature:
            raise PartitionFailed(f"partition {index}: a worker parses with {worker_signature}, "
                                  f"the driver expects {signature}; install the same model and empathy version")
        store.write(index, digest, signature, frame)
        stats.computed += 1
        stats.model_loads[facts["pid"]] = facts["model_loads"]  # type: ignore[index]
        if progress is not None:
            progress(stats)

    for index, chunk in enumerate(_partitions(texts, partition_size)):
        stats.partitions += 1
        stats.texts += len(chunk)
        digest = partition_digest(chunk)
        if store.is_done(index, digest, signature):
            stats.skipped += 1
            if progress is not None:
                progress(stats)
            continue
        future = client.submit(parse_partition, index * partition_size, chunk, batch_size, retries=retries,
                               key=f"empathy-parse-{signature}-{digest}-{index}", pure=False)
        meta[future.key] = (index, digest)
        pending.add(future)
        while pending.count() >= limit:
            collect(next(pending))
    for future in pending:
        collect(future)
    store.finish(stats.partitions, stats.texts, partition_size, signature)
    return stats


def read_results(output_dir: str | os.PathLike[str]) -> Iterator[DistancingResult]:
    """The :class:`~empathy.distancing.DistancingResult` of every text of a finished run, in input order."""
    for frame in PartitionStore(output_dir).frames(["result"]):
        for payload in frame["result"]:
            yield DistancingResult.from_json(json.loads(payload))


def read_features(output_dir: str | os.PathLike[str]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Sentence counts ``(n,)`` and densities ``(n, 3)`` of a finished run, as the single-process analyser has them.

    The densities are :meth:`DistancingResult.densities` of the stored counts (NaN without sentences).
    """
    frames = list(PartitionStore(output_dir).frames(["sentences", *LABELS]))
    if not frames:
        return np.empty(0), np.empty((0, len(LABELS)))
    table = pd.concat(frames, ignore_index=True)
    sentences = table["sentences"].to_numpy(dtype=float)
    counts = table[list(LABELS)].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        densities = counts / sentences[:, None]
    densities[sentences <= 0] = np.nan
    return sentences, densities


def cluster_analyser(client: Client, output_dir: str | os.PathLike[str], **options: Any
                     ) -> Callable[[Sequence[str]], tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """A text analyser for :func:`empathy.evaluate.text_features` that parses on the cluster of ``client``.

    ``output_dir`` keeps the partitions (a re-run resumes from them); ``options`` go to
    :func:`parse_to_partitions`.
    """
    def analyse(texts: Sequence[str]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        parse_to_partitions(texts, output_dir, client, **options)
        return read_features(output_dir)

    return analyse
