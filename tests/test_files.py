"""Atomic writes and output-path checks (bayes_ir.files)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from bayes_ir import files
from bayes_ir.errors import OptionError


@pytest.fixture(autouse=True)
def _fresh_inputs():
    """Each test starts with no declared inputs (declare_inputs is per context)."""
    files.reset_inputs()
    yield
    files.reset_inputs()


def test_write_text_creates_folders_and_replaces(tmp_path):
    target = tmp_path / "a" / "b" / "out.csv"
    assert files.write_text(target, "x,y\n1,2\n") == target
    assert target.read_text() == "x,y\n1,2\n"
    files.write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert os.listdir(target.parent) == ["out.csv"]  # no temporary file left


def test_mode_follows_umask(tmp_path):
    old = os.umask(0o027)
    try:
        target = files.write_bytes(tmp_path / "f.bin", b"\x00\x01")
    finally:
        os.umask(old)
    assert target.stat().st_mode & 0o777 == 0o640
    assert target.read_bytes() == b"\x00\x01"


def test_exception_in_writer_leaves_target_and_no_temp(tmp_path):
    target = tmp_path / "fit.nc"
    target.write_bytes(b"old")
    for exc in (RuntimeError("boom"), KeyboardInterrupt()):
        with pytest.raises(type(exc)), files.atomic_path(target) as tmp:
            assert tmp.parent == tmp_path and tmp.suffix == ".nc"
            tmp.write_bytes(b"partial")
            raise exc
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["fit.nc"]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: (d / "parent").write_text("x") and d / "parent" / "out.csv", "is a file"),
        (lambda d: (d / "dir.csv").mkdir() or d / "dir.csv", "is a folder"),
        (lambda d: d / ("n" * 300 + ".csv"), "too long"),
        (lambda d: d / ("n" * 300) / "out.csv", "too long"),
    ],
    ids=["parent-is-file", "path-is-folder", "name-too-long", "folder-name-too-long"],
)
def test_bad_output_paths(tmp_path, make, message):
    target = make(tmp_path)
    with pytest.raises(OptionError, match=message) as info:
        files.write_text(target, "x")
    assert str(target)[:40] in str(info.value)


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root ignores modes")
def test_no_permission_is_named(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(OptionError, match=r"locked/out\.csv: cannot write \(Permission"):
            files.write_text(locked / "out.csv", "x")
    finally:
        locked.chmod(0o700)


def test_output_over_input_is_refused(tmp_path):
    data = tmp_path / "scores.csv"
    data.write_text("keep me")
    (tmp_path / "sym.csv").symlink_to(data)
    os.link(data, tmp_path / "hard.csv")
    (tmp_path / "sub").mkdir()
    files.declare_inputs([data, None, "<DataFrame>"])
    for alias in ("scores.csv", "sym.csv", "hard.csv", "sub/../scores.csv"):
        with pytest.raises(OptionError, match=r"is the input file .*scores\.csv") as info:
            files.write_text(tmp_path / alias, "overwritten")
        assert alias in str(info.value)
    assert data.read_text() == "keep me"
    files.write_text(tmp_path / "other.csv", "fine")  # any other name is fine


def test_inputs_argument_without_declaration(tmp_path):
    data = tmp_path / "in.txt"
    data.write_text("keep")
    with pytest.raises(OptionError, match="input file"):
        files.check_output_path(data, inputs=[data], what="--output")


def test_concurrent_writers_leave_one_complete_file(tmp_path):
    """Threads writing large, distinct contents to one path: the result is one of them whole."""
    target = tmp_path / "out.bin"
    payloads = [bytes([i]) * 2_000_000 for i in range(8)]
    barrier = threading.Barrier(len(payloads))

    def work(data: bytes) -> None:
        barrier.wait()
        for _ in range(3):
            files.write_bytes(target, data)

    threads = [threading.Thread(target=work, args=(p,)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert target.read_bytes() in payloads
    assert os.listdir(tmp_path) == ["out.bin"]


def test_no_permission_is_named_even_as_root(tmp_path, monkeypatch):
    """The folder refuses the temporary file (EACCES, as for a user without write access)."""
    import errno

    def refuse(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    monkeypatch.setattr(files.os, "open", refuse)
    with pytest.raises(OptionError, match=r"out\.csv: cannot write \(Permission denied\)"):
        files.write_text(tmp_path / "out.csv", "x")
    assert os.listdir(tmp_path) == []


def test_failed_rename_leaves_no_temp(tmp_path, monkeypatch):
    """The rename fails (e.g. EXDEV, ENOSPC): one clear error, the old file intact, no temp."""
    import errno

    target = tmp_path / "out.csv"
    target.write_text("old")

    def no_space(src, dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "replace", no_space)
    with pytest.raises(OptionError, match=r"out\.csv: cannot write \(No space left on device\)"):
        files.write_text(target, "new")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["out.csv"]


def test_a_folder_declares_the_files_in_it(tmp_path):
    """An output named like a run inside an input folder is refused (-o over an input)."""
    import pytest

    from bayes_ir.errors import OptionError
    from bayes_ir.files import check_output_path, declare_inputs

    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "bm25.run").write_text("1 Q0 d1 1 1.0 bm25\n", encoding="utf-8")
    declare_inputs([folder])
    with pytest.raises(OptionError, match="bm25.run"):
        check_output_path(folder / "bm25.run")
    with pytest.raises(OptionError, match="inside the input folder"):
        check_output_path(folder / "new.csv")  # the next read of the folder would take it
    check_output_path(folder / "sub" / "new.csv")  # a folder of runs is not read recursively


# ---------------------------------------------------------------------- input files
def test_check_input_refuses_what_cannot_be_read_unopened(tmp_path):
    from bayes_ir.errors import ScoreTableError

    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    with pytest.raises(ScoreTableError, match=r"pipe\.txt: is a FIFO .*selector file"):
        files.check_input(fifo, what="selector file")
    with pytest.raises(ScoreTableError, match=r"/dev/zero: is a character device"):
        files.check_input("/dev/zero")
    (tmp_path / "dir").mkdir()
    with pytest.raises(ScoreTableError, match=r"dir: is a folder, not a config"):
        files.check_input(tmp_path / "dir", what="config")
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "gone.txt")
    with pytest.raises(ScoreTableError, match=r"link\.txt: is a broken symbolic link"):
        files.check_input(link)


def test_check_input_finds_a_name_in_the_other_unicode_normalisation(tmp_path):
    decomposed = tmp_path / "cafe\u0301" / "re\u0301sume\u0301.csv"  # as macOS writes it
    decomposed.parent.mkdir()
    decomposed.write_text("x\n", encoding="utf-8")
    typed = tmp_path / "caf\u00e9" / "r\u00e9sum\u00e9.csv"
    assert not typed.exists()
    assert files.check_input(typed) == decomposed


def test_check_input_refuses_a_file_larger_than_the_memory_limit(tmp_path, monkeypatch):
    from bayes_ir.errors import ScoreTableError

    big = tmp_path / "big.csv"
    with open(big, "wb") as handle:
        handle.truncate(5_000_000)  # sparse: no disk space
    monkeypatch.setenv("BAYES_IR_MEMORY_LIMIT", "1000000")
    with pytest.raises(ScoreTableError, match=r"big\.csv: the file is 5\.0 MB, more than"):
        files.check_input(big)


def test_read_input_text_decodes_as_score_files_do(tmp_path):
    from bayes_ir.errors import ScoreTableError

    path = tmp_path / "sel.txt"
    path.write_bytes("\ufeffa\r\nb\r\n".encode())
    assert files.read_input_text(path, what="selector file") == (path, "a\r\nb\r\n")
    for data, message in (
        ("a\n".encode("utf-16"), r"sel\.txt:1: UTF-16 text"),
        ("a\nb\n".encode("utf-16-le"), r"sel\.txt:1: UTF-16 text"),  # no byte-order mark
        (b"a\ncaf\xe9\n", r"sel\.txt:2: not UTF-8 text \(byte 0xe9 at offset 5\)"),
        (b"a\x00b\n", r"sel\.txt:1: binary data"),
    ):
        path.write_bytes(data)
        with pytest.raises(ScoreTableError, match=message):
            files.read_input_text(path, what="selector file")
    path.write_bytes(b"x" * 101)
    with pytest.raises(ScoreTableError, match=r"sel\.txt: the selector file is larger than"):
        files.read_input_text(path, what="selector file", max_bytes=100)


def test_outputs_into_an_input_folder_are_refused(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.run").write_text("1 Q0 d1 1 1.0 a\n", encoding="utf-8")
    files.declare_inputs([folder, tmp_path / "sel.txt"])
    with pytest.raises(OptionError, match="inside the input folder"):
        files.check_output_path(folder / "out.csv", what="--output")
    files.check_output_path(tmp_path / "out.csv")
    files.reset_inputs()
    files.check_output_path(folder / "out.csv")  # a new run: nothing declared
