"""Result files: validated, written atomically and loaded back (files), read as typed records."""
