# Included by CTest after the discovered GoogleTest cases. The cases below take seconds in the
# Release suite and a minute or more under ASan + UBSan (20 to 30 times slower there); they carry
# the label "slow", which the asan test preset leaves out. Smaller cases of the same code paths
# (multiscale against dense in one to three dimensions, the block-sparse plan of a float32
# problem, warm starts, the dense divergence) stay in the sanitizer suite.
# One call per case: a name that no longer exists then loses only its own label.
foreach(name IN ITEMS
  StreamingSolver.ResultsDoNotDependOnThreadCount
  ClosedForm.DivergenceBetweenACloudAndItsTranslateIsTheSquaredShift
  MultiscaleBound.BoundsTheErrorOfEveryTruncatedUpdate
  Converge.TheDefaultRunConvergesToTheTolerance
  Converge.Float32FarAboveTheCostsKeepsItsDigitsInFloat64
  Converge.TheDivergenceFarAboveTheDataScaleIsConvergedOnlyWhenItsValueIs
  MultiscaleLevels.AManyBlockCoarseProblemIsSolvedOnBlocksOfItsOwn
  MultiscalePlan.ProductsMarginalsMapAndGradientsMatchTheDensePlan
  MultiscalePlan.HessianProductsMatchTheDensePlan
  MultiscaleDivergence.MatchesTheDenseDivergenceAndItsGradients
  MultiscaleDivergence.TheGeomLossScheduleConvergesOnMultiscaleWithinItsOwnError
  MultiscaleDivergence.AutoPicksMultiscaleWhereItPays
  MultiscaleWarmStart.FarFromTheSolutionStillConverges
  )
  set_tests_properties(${name} PROPERTIES LABELS slow)
endforeach()
