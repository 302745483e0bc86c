#include <QtTest>
class TestTrainCli : public QObject {
    Q_OBJECT
};
QTEST_GUILESS_MAIN(TestTrainCli)
#include "test_train_cli.moc"
