print("harbor-seeds: nothing yet")
