import sys

from grader.app.cli import main

sys.exit(main())
