// V8's heap growing factor for the whole process (tuneHeapGrowing, lib/internals/node.ts),
// set as this module loads. lib/main.ts imports it before anything else: V8 fixes how far the old
// generation may grow at each full collection, and loading hapi, joi and the rest already takes
// several. Set after them, the limit they left stays until the heap reaches it (about 5 MB more
// resident memory at 50 items/s).
import { tuneHeapGrowing } from '../internals/node';

tuneHeapGrowing();
