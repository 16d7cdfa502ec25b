"""Use cases shared by every entry point (API routes, dashboard, PR bot, command line): each is one function
over the store, so "results arrived" and "what is the verdict" mean the same thing wherever they are asked."""
