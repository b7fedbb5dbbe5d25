"""``python -m audit`` runs the command line."""

from audit.cli import main

if __name__ == "__main__":
    main()
