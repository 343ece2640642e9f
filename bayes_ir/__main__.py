"""``python -m bayes_ir``: the ``bayes-ir`` command line."""

from bayes_ir.cli import main

if __name__ == "__main__":
    main()
