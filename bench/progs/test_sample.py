# A small Python test run for the triage figure: unittest with a few ordinary tests.
import json
import re
import unittest


class Sample(unittest.TestCase):
    def test_sort(self):
        data = [(i * 7919) % 1009 for i in range(1009)]  # (each of 0..1008 once)
        self.assertEqual(sorted(data)[:3], [0, 1, 2])

    def test_json_roundtrip(self):
        doc = {"k%d" % i: [i, str(i), {"x": i}] for i in range(200)}
        self.assertEqual(json.loads(json.dumps(doc)), doc)

    def test_regex(self):
        text = " ".join("word%d" % i for i in range(500))
        self.assertEqual(len(re.findall(r"word\d+", text)), 500)


if __name__ == "__main__":
    unittest.main()
