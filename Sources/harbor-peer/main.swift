print("harbor-peer: nothing yet")
