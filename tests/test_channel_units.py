"""Unit tests of the parent side of the boundary: binding buffers to parameters, the protocol's caps,
the jail's limits (no worker process)."""
import pytest

from grader.channel.binding import BindingError, Param, bind


def test_binding_by_name_and_its_errors():
    params = [Param("x_ptr", False), Param("z_ptr", False), Param("N0", False), Param("B0", True)]
    binding = bind(params, ["x", "z"], {"N0": 200, "B0": 32, "B1": 8}, "add(x_ptr, z_ptr, N0, B0)")
    assert binding.named == {"N0": 200, "B0": 32}, "only declared parameters are passed"
    signature, constexprs = binding.compile_signature(params, ["float32", "float32"])
    assert signature == {"x_ptr": "*fp32", "z_ptr": "*fp32", "N0": "i32", "B0": "constexpr"}
    assert constexprs == {"B0": 32}

    with pytest.raises(BindingError, match="kernel parameter 'N' is not something this puzzle passes"):
        bind(params[:2] + [Param("N", False)], ["x", "z"], {"N0": 1}, "sig")
    with pytest.raises(BindingError, match="parameter 'N0' stands where a pointer belongs"):
        bind([Param("x_ptr", False), Param("N0", False)], ["x", "z"], {"N0": 1}, "sig")
    with pytest.raises(BindingError, match="the kernel takes 1 parameters, but this puzzle passes 2 pointers"):
        bind(params[:1], ["x", "z"], {}, "sig")


def test_a_worker_cannot_make_the_grader_read_a_huge_message():
    """The channel is untrusted: a claimed frame or blob count past the caps ends the read at
    once, before any of it is buffered."""
    import json
    import os
    import struct

    from grader.channel.protocol import MAX_FRAME, ChannelClosed, Reader
    header = json.dumps({"blobs": 10 ** 9}).encode()
    for payload in (struct.pack(">Q", MAX_FRAME + 1), struct.pack(">Q", len(header)) + header):
        read, write = os.pipe()
        os.write(write, payload)
        with pytest.raises(ChannelClosed, match="the stream is corrupt"):
            Reader(read).read_message(timeout=5)
        os.close(read)
        os.close(write)


def test_a_worker_of_a_plain_user_gets_a_task_cap(monkeypatch):
    """RLIMIT_NPROC stops a fork bomb for a plain user (it counts every thread the user runs,
    so the cap is what they run now plus room); root is exempt from it in the kernel."""
    from grader.channel import isolation
    monkeypatch.setattr(isolation.os, "getuid", lambda: 0)
    assert isolation._task_cap() is None
    monkeypatch.setattr(isolation.os, "getuid", lambda: 4_000_000)  # a user with no tasks here
    assert isolation._task_cap() == isolation.TASKS_SPARE
