import KoeWorld
import KoeIO
print("koe")
