"""What the web page does that is not drawing it: settings, uploads, downloads, estimates, paths, roles, the
server's flags and logins, the demos it starts; no Gradio here."""
