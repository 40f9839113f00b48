"""`safeground`: the operator's command line, over Django's management commands.

Commands are spelt with dashes (`import-venue`) and run the management command of the same name
with underscores. `safeground --help` lists Safeground's own commands; Django's (migrate,
createsuperuser, ...) still work by name.
"""

import os
import sys

# The operator commands, in the order --help lists them.
COMMANDS: dict[str, str] = {
    "demo": "Load the demo ground, clubs, season, today's rerun and one login per role.",
    "serve": "Serve Safeground over ASGI (uvicorn) and print the address and demo logins.",
    "worker": "Run background tasks queued in the database (SAFEGROUND_TASKS=database).",
    "import-venue": "Import a ground from a YAML file (validated whole; nothing written on error).",
    "adduser": "Create a user with a role in an organisation.",
    "adddevice": "Create a device key (turnstile or scanner) for an organisation.",
    "revokedevice": "Revoke a device key.",
    "replay": "Play a scripted match into the live system (the demo ships 'seed').",
    "verify-log": "Check each match's log chain and signed checkpoints; name what is missing.",
    "checkpoint": "Sign a match's log head (--match ID [--full-time]) or every head due (--due).",
    "replay-arrival": "Play the cup tie's arrival through the turnstiles (the gates demo).",
    "add-fixture": "Add a fixture at a ground (--ground CODE --opponent ... --layout ...).",
    "import-fixtures": "Import a season's fixtures from a CSV file (FILE --ground CODE).",
    "import-tickets": "Import tickets for a match from a CSV export (FILE --fixture ID).",
    "recount-entry": "Recount the gates' kept counts from the scans (--check: compare only).",
    "import-arrests": "Import a match's arrests from a police CSV (FILE --fixture ID --by USER).",
    "assess": "Check the risk policy; assess open fixtures again (--policy FILE: try a file).",
    "verify-bundle": "Check a case bundle (ZIP) against its manifest; name each file that differs.",
    "apply-retention": "Start and expire bans by date; erase people past the retention period.",
    "backup": "Back up the database, evidence, photos and checkpoints into DIR, with hashes.",
    "restore": "Restore a backup (DIR) into an empty system; check every hash, log and file.",
    "backup-key": "Make a key pair for encrypted backups: private key to FILE, public key out.",
    "verify-backup": "Check a backup (DIR) against its manifest's hashes; needs no key.",
    "vapidkey": "Print a new VAPID private key for push alerts (SAFEGROUND_VAPID_PRIVATE_KEY).",
    "migrate": "Create or update the database tables.",
    "exchange": "Serve the league's ban exchange (its own role and database; see --help).",
    "exchange-enrol": "At the exchange: enrol a club (--name --contact --public-key).",
    "league-key": "Print this installation's signing public key, to enrol at the exchange.",
    "league-publish": "Publish this club's league-wide bans in force to the exchange now.",
    "league-check": "Check a fixture's ticket holders against the league's bans (--fixture ID).",
}


def usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = [
        "usage: safeground COMMAND [options]   (safeground COMMAND --help for its options)",
        "",
    ]
    lines += [f"  {name.ljust(width)}  {text}" for name, text in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv if argv is None else argv)
    if len(argv) < 2 or argv[1] in {"-h", "--help", "help"}:
        print(usage())
        sys.exit(0 if len(argv) >= 2 else 2)
    if argv[1] == "exchange" or argv[1].startswith("exchange-"):
        # The league's exchange: its role (and so its database) before the settings load.
        os.environ["SAFEGROUND_ROLE"] = "exchange"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "safeground.settings.dev")
    from django.core.management import execute_from_command_line

    argv[1] = argv[1].replace("-", "_")
    execute_from_command_line(["safeground", *argv[1:]])


if __name__ == "__main__":
    main()
