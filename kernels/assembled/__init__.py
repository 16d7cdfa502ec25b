"""What every task's assembled kernels share: the code generator of the generated kernels (``codegen``;
implementation ``assembled``) and the tables of the generic runtime kernels (``generic_tables``; implementation
``assembled_generic``). Each task's own generator and generic kernel live in its package."""
