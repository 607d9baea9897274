// The inspector page's one script.
