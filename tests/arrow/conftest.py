import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for p in (os.path.join(_ROOT, "python"), os.path.join(_ROOT, "tests", "reference"), os.path.dirname(__file__)):
    if p not in sys.path:
        sys.path.insert(0, p)
