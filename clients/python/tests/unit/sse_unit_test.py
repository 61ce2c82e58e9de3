import unittest

from gpunet.sse import SseEvent, SseParser


def feed_all(chunks: list[bytes]) -> tuple[list[SseEvent], SseParser]:
    parser = SseParser()
    out: list[SseEvent] = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
    return out, parser


class SseParserTest(unittest.TestCase):
    CASES = [
        ("LF line ends", [b"event: a\ndata: 1\n\n"], [SseEvent("a", "1", None)]),
        ("CRLF line ends", [b"event: a\r\ndata: 1\r\n\r\n"], [SseEvent("a", "1", None)]),
        ("CR line ends", [b"event: a\rdata: 1\r\r"], [SseEvent("a", "1", None)]),
        ("a CRLF split across chunks is one line end", [b"data: 1\r", b"\n\r", b"\n"], [SseEvent("message", "1", None)]),
        ("no event name is message", [b"data: x\n\n"], [SseEvent("message", "x", None)]),
        ("data lines join with LF", [b"data: a\ndata: b\n\n"], [SseEvent("message", "a\nb", None)]),
        ("comments (heartbeats) are ignored", [b": keep-alive\n\n: stream open\n\ndata: z\n\n"], [SseEvent("message", "z", None)]),
        ("an event without data is not dispatched", [b"event: ping\n\n"], []),
        ("a leading BOM is dropped", [b"\xef\xbb\xbfdata: 1\n\n"], [SseEvent("message", "1", None)]),
        ("only one space after the colon is dropped", [b"data:  two\n\n"], [SseEvent("message", " two", None)]),
        ("a field without a colon has an empty value", [b"data\n\n"], [SseEvent("message", "", None)]),
        (
            "the id persists to later events",
            [b"id: 7\ndata: a\n\ndata: b\n\n"],
            [SseEvent("message", "a", "7"), SseEvent("message", "b", "7")],
        ),
        ("an id with NUL is ignored", [b"id: 1\ndata: a\n\nid: 2\x00\ndata: b\n\n"], [SseEvent("message", "a", "1"), SseEvent("message", "b", "1")]),
        ("an unfinished event waits for its blank line", [b"data: a\n"], []),
        ("a UTF-8 character split across chunks", [b"data: \xe2\x89", b"\xa4 1\n\n"], [SseEvent("message", "≤ 1", None)]),
    ]

    def test_cases(self) -> None:
        for name, chunks, expected in self.CASES:
            with self.subTest(name):
                self.assertEqual(feed_all(chunks)[0], expected)

    def test_byte_by_byte_is_the_same_as_at_once(self) -> None:
        text = b'\xef\xbb\xbf: open\r\nid: 3\r\nevent: job.funded\r\ndata: {"a":"\xe2\x89\xa4"}\r\n\r\nevent: end\ndata: {}\n\n'
        whole, _ = feed_all([text])
        split, _ = feed_all([text[i : i + 1] for i in range(len(text))])
        self.assertEqual(split, whole)
        self.assertEqual([e.event for e in whole], ["job.funded", "end"])
        self.assertEqual(whole[0].data, '{"a":"≤"}')

    def test_retry_takes_digits_only(self) -> None:
        _, parser = feed_all([b"retry: 1500\n\n"])
        self.assertEqual(parser.retry_ms, 1500)
        _, parser = feed_all([b"retry: 1.5\n\nretry: soon\n\n"])
        self.assertIsNone(parser.retry_ms)

    def test_last_event_id(self) -> None:
        _, parser = feed_all([b"id: 41\ndata: a\n\nid: 42\n"])
        self.assertEqual(parser.last_event_id, "42")


if __name__ == "__main__":
    unittest.main()
