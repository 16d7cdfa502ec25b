"""One module per task: constants, reward scales and the hot-slice array contract."""
