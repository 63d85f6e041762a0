print("rawble")
