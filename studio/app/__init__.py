"""What the web page does that is not drawing it: settings, uploads, downloads, estimates, paths, roles; no Gradio here."""
