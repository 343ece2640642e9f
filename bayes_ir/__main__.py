"""``python -m bayes_ir``: the ``bayes-ir`` command line."""

import sys

try:
    from bayes_ir.cli import main
except KeyboardInterrupt:  # Ctrl-C while the command line loads: one line, as main() says it
    sys.stderr.write("interrupted\n")
    sys.exit(130)

if __name__ == "__main__":
    main()
