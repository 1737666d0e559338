# A scripted remote stub for test_dbt.cpp's RspLink tests: speaks RSP on stdin/stdout in
# no-ack mode and answers qXfer:auxv:read with bytes that need escaping ('#', '$', '}', '*'),
# split over two replies, the second run-length encoded.
import sys

def packets():
    buf = b""
    while True:
        chunk = sys.stdin.buffer.read1(4096)
        if not chunk:
            return
        buf += chunk
        while b"#" in buf and len(buf) >= buf.index(b"#") + 3:
            start = buf.index(b"$")
            end = buf.index(b"#")
            yield buf[start + 1:end]
            buf = buf[end + 3:]

def send(payload):
    sys.stdout.buffer.write(b"$" + payload + b"#%02x" % (sum(payload) % 256))
    sys.stdout.buffer.flush()

def escape(data):
    return b"".join(b"}" + bytes([c ^ 0x20]) if c in b"#$}*" else bytes([c]) for c in data)

for p in packets():
    if p == b"QStartNoAckMode":
        sys.stdout.buffer.write(b"+")
        send(b"OK")
    elif p.startswith(b"qXfer:auxv:read::0,"):
        send(b"m" + escape(b"#$}*" + bytes(range(8))))
    elif p.startswith(b"qXfer:auxv:read::c,"):
        send(b"l" + escape(b"\x2a") + b"z* ")  # '*' escaped, then "zzzz" run-length encoded
    else:
        send(b"")
