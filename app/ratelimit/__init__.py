"""Rate limiting shared by every worker and host through the database (fixed one-minute windows)."""
