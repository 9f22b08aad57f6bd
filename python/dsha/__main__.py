import sys

from dsha.cli import main

sys.exit(main())
