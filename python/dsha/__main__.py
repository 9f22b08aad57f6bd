import sys

from dsha.cli import exit_codes, main

try:
    code = main()
except KeyboardInterrupt:  # before main's own handling starts, or after it ended
    print("dsha: interrupted", file=sys.stderr)
    code = exit_codes.INTERRUPTED
sys.exit(code)
