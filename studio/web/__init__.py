"""The web server around the page: the login guard every request passes, the language a request asks for, the
export download route. studio/ui/ draws the page; this package serves it (it draws nothing)."""
