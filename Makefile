placeholder:
