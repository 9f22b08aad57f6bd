"""What every part of the benchmark shares: its folders, the log line, the load average and writing results."""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data")
RESULTS = os.path.join(HERE, "results")


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def loadavg():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def sf_label(sf):
    """A scale factor as it stands in file names: 0.25 -> 0_25."""
    return ("%g" % sf).replace(".", "_")


def write_results(stem, md, data):
    """Writes a benchmark's results as STEM.md and STEM.json, and prints the Markdown."""
    os.makedirs(os.path.dirname(os.path.abspath(stem)), exist_ok=True)
    with open(stem + ".json", "w") as f:
        json.dump(data, f, indent=2)
    with open(stem + ".md", "w") as f:
        f.write(md)
    print(md)
    log(f"wrote {stem}.md and {stem}.json")
