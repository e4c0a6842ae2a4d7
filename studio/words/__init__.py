"""The words the studio shows, by id, in every page language: catalog.py, and the page forms of errors, reasons and notices."""
