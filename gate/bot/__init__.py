"""The PR bot: GitHub webhooks in, a commit status and one edited PR comment out (see ``worker``)."""
